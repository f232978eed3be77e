#!/usr/bin/env bash
# The man pages against what they describe (packaging/man.sh makes them):
#   fdrill(1)           a section for every subcommand `fdrill --help` lists, nested
#                       ones too, each holding every option that subcommand's --help has
#   fdrill-agent(8)     every option of `fdrill-agent --help`
#   fdrill-scenario(5)  every top-level key the scenario loader accepts, as the
#                       loader lists them when it refuses an unknown one
# and, so that the check can fail, each check run once more against a page
# with one of those things taken out.
#   man_test.sh BUILD_DIR
set -euo pipefail
build=$1
fdrill=$build/bin/fdrill
agent=$build/bin/fdrill-agent
man=$build/man
work=$(mktemp -d "${TMPDIR:-/tmp}/fdrill-man-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
  echo "man_test: FAIL: $*" >&2
  exit 1
}
for page in fdrill.1 fdrill-agent.8 fdrill-scenario.5; do
  [ -s "$man/$page.gz" ] || fail "$man/$page.gz was not built (is help2man installed? ./test.sh installs it)"
  # help2man writes a hyphen as \- (roff's minus): read it as the help's.
  zcat "$man/$page.gz" | sed 's/\\-/-/g' > "$work/$page"
done

subcommands() {
  awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^[^ ]/ { on = 0 }'
}
# The long options a help text lists, one a line.
options() { grep -oE '^ +(-[a-zA-Z],)?--[a-z][a-z0-9-]*' | sed -E 's/^ +(-[a-zA-Z],)?//' | sort -u; }

# check_fdrill PAGE: 0 when PAGE has every subcommand and its options.
check_fdrill() {
  local page=$1 missing=0
  walk() {
    local sub
    for sub in $("$fdrill" "$@" --help | subcommands); do
      local path="$*${*:+ }$sub"
      if ! grep -qxF ".SS \"fdrill $path\"" "$page"; then
        echo "fdrill(1) has no section for fdrill $path" >&2
        missing=1
        continue
      fi
      # The section: from its .SS line to the next.
      local section
      section=$(awk -v h=".SS \"fdrill $path\"" '$0 == h { on = 1; next } on && /^\.SS / { exit } on' "$page")
      for opt in $("$fdrill" "$@" "$sub" --help | options); do
        grep -qF -- "$opt" <<< "$section" || { echo "fdrill(1): fdrill $path lacks $opt" >&2; missing=1; }
      done
      walk "$@" "$sub"
    done
  }
  walk
  return $missing
}
check_agent() {
  local page=$1 missing=0
  for opt in $("$agent" --help | options); do
    grep -qF -- "$opt" "$page" || { echo "fdrill-agent(8) lacks $opt" >&2; missing=1; }
  done
  return $missing
}
# The loader's top-level keys: "unknown key "x" in the scenario (allowed: a, b, c)".
printf 'name: t\nfabric: {emulated: {nodes: 2}}\nno_such_key: 1\nphases: [{name: p, duration: 1s}]\n' \
  > "$work/drill.yaml"
refusal=$("$fdrill" validate "$work/drill.yaml" 2>&1 || true)
keys=$(sed -n 's/.*(allowed: \(.*\)).*/\1/p' <<< "$refusal" | tr -d ' ' | tr ',' ' ')
[ -n "$keys" ] || fail "fdrill validate did not list the allowed keys: $refusal"
check_scenario() {
  local page=$1 missing=0
  for key in $keys; do
    grep -qE "^$key:" "$page" || { echo "fdrill-scenario(5) lacks the key $key:" >&2; missing=1; }
  done
  return $missing
}

check_fdrill "$work/fdrill.1" || fail "fdrill(1) does not match fdrill --help"
check_agent "$work/fdrill-agent.8" || fail "fdrill-agent(8) does not match fdrill-agent --help"
check_scenario "$work/fdrill-scenario.5" || fail "fdrill-scenario(5) lacks keys the loader accepts"

# Each check fails on a page that lost one thing.
grep -vxF '.SS "fdrill fabric up"' "$work/fdrill.1" > "$work/fdrill.1.cut"
! check_fdrill "$work/fdrill.1.cut" 2>/dev/null || fail "check_fdrill passed a page without fdrill fabric up"
sed -e 's/tls-ca//g' "$work/fdrill-agent.8" > "$work/fdrill-agent.8.cut"
! check_agent "$work/fdrill-agent.8.cut" 2>/dev/null || fail "check_agent passed a page without --tls-ca"
grep -v '^safety:' "$work/fdrill-scenario.5" > "$work/fdrill-scenario.5.cut"
! check_scenario "$work/fdrill-scenario.5.cut" 2>/dev/null || fail "check_scenario passed a page without safety:"
echo "man_test: fdrill(1), fdrill-agent(8) and fdrill-scenario(5) match the programs and the loader"
