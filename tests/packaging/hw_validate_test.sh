#!/usr/bin/env bash
# scripts/hw-validate.sh against this build: one row per hardware kind that
# `fdrill injectors` lists. On a machine with no GPU and no HCA (no
# /sys/class/infiniband entry, no NVIDIA PCI device) it runs the script as an
# operator would: exit 0 within 10 s, every row "absent" with a reason, no
# drill, no run directory. Where there is hardware it checks `--list` instead
# (the rows, each present or absent with a reason; nothing is applied: a
# unit test does not fault a machine's ports or GPUs). Then the usage
# errors: an unknown flag, an unknown or non-hardware kind for --only, a
# build directory without bin/fdrill, each exit 2 naming what was wrong. No
# root needed.
#
#   hw_validate_test.sh scripts/hw-validate.sh BUILD_DIR
set -euo pipefail

script=$1
build=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/fdrill-hwv-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "hw_validate_test: FAIL: $*" >&2
  exit 1
}

# The hardware kinds, by the rule the script states: scope ib_port or gpu,
# or an interface kind that reaches RoCE or InfiniBand RDMA.
"$build/bin/fdrill" injectors >"$work/injectors.txt"
awk '
  /^[a-z0-9_]+ / { kind = $1 }
  /^ +scope: / { scope[kind] = $2 }
  /^ +reaches: / { if ($0 ~ /RoCE RDMA|InfiniBand RDMA/) rdma[kind] = 1 }
  /^ +this node: / { if (scope[kind] == "ib_port" || scope[kind] == "gpu" ||
                         (scope[kind] == "interface" && rdma[kind])) print kind }
' "$work/injectors.txt" >"$work/kinds"
[ "$(wc -l <"$work/kinds")" -ge 10 ] || fail "fdrill injectors lists only $(wc -l <"$work/kinds") hardware kinds: $(cat "$work/kinds")"

hardware=""
if [ -d /sys/class/infiniband ] && [ -n "$(ls -A /sys/class/infiniband)" ]; then
  hardware+="HCA ports "
fi
for dev in /sys/bus/pci/devices/*; do
  [ "$(cat "$dev/vendor" 2>/dev/null)" = 0x10de ] || continue
  case "$(cat "$dev/class" 2>/dev/null)" in 0x0300* | 0x0302*) hardware+="NVIDIA GPU " ;; esac
done

# rows FILE: the table's rows, fields split on runs of 2+ spaces
# (MECHANISM, PRESENT, EFFECT MEASURED, REVERTED, DETAIL), tab-separated.
rows() {
  awk '/^MECHANISM  / { on = 1; next } /^hw-validate: / { on = 0 } on && NF { n = split($0, f, /  +/); print f[1] "\t" f[2] "\t" f[3] "\t" f[4] "\t" f[5] }' "$1"
}

# check_rows FILE: one row per hardware kind; absent rows give a reason.
check_rows() {
  rows "$1" >"$work/rows"
  cut -f1 "$work/rows" | sort >"$work/row-kinds"
  sort "$work/kinds" | diff - "$work/row-kinds" >"$work/diff" ||
    fail "rows are not one per hardware kind (< fdrill injectors, > table): $(cat "$work/diff")"
  while IFS=$'\t' read -r kind present _ _ detail; do
    case "$present" in
      absent | yes) ;;
      *) fail "$kind: PRESENT is '$present'" ;;
    esac
    [ "$present" != absent ] || [ -n "$detail" ] || fail "$kind: absent without a reason"
  done <"$work/rows"
}

if [ -z "$hardware" ]; then
  start=$(date +%s%N)
  rc=0
  "$script" --build "$build" --out "$work/out" >"$work/out.txt" 2>"$work/err.txt" || rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  [ "$rc" = 0 ] || fail "exit $rc on a machine with no GPU and no HCA: $(cat "$work/out.txt" "$work/err.txt")"
  [ "$ms" -lt 10000 ] || fail "took $ms ms (want < 10 s)"
  check_rows "$work/out.txt"
  if cut -f2 "$work/rows" | grep -qv '^absent$'; then
    fail "a row is not absent here: $(grep -v $'\tabsent\t' "$work/rows")"
  fi
  grep -q "^hw-validate: found:" "$work/out.txt" || fail "no 'found:' header: $(cat "$work/out.txt")"
  grep -q "no drill was run" "$work/out.txt" || fail "does not say no drill ran: $(cat "$work/out.txt")"
  [ ! -e "$work/out" ] || fail "made $work/out with nothing to run"
  echo "hw_validate_test: no GPU, no HCA: $(wc -l <"$work/rows") absent rows, exit 0 in $ms ms"
else
  rc=0
  "$script" --build "$build" --list >"$work/list.txt" 2>"$work/err.txt" || rc=$?
  [ "$rc" = 0 ] || fail "--list: exit $rc: $(cat "$work/list.txt" "$work/err.txt")"
  check_rows "$work/list.txt"
  echo "hw_validate_test: $hardware here: --list printed $(wc -l <"$work/rows") rows ($(cut -f2 "$work/rows" | sort | uniq -c | tr -s ' ' | tr '\n' ';'))"
fi

# expect_usage NAME TEXT ARGS...: exit 2 and stderr holds TEXT.
expect_usage() {
  local name=$1 text=$2 rc=0
  shift 2
  "$script" "$@" >"$work/out.txt" 2>"$work/err.txt" || rc=$?
  [ "$rc" = 2 ] || fail "$name: exit $rc, want 2 (stderr: $(cat "$work/err.txt"))"
  grep -qF -- "$text" "$work/err.txt" || fail "$name: stderr lacks '$text': $(cat "$work/err.txt")"
}
expect_usage bad-flag "--bogus" --build "$build" --bogus
expect_usage no-value "--only needs a value" --build "$build" --only
expect_usage unknown-kind "no fault kind 'no_such_kind'" --build "$build" --only no_such_kind
expect_usage not-hardware "link_rate does not act on hardware" --build "$build" --only link_rate
expect_usage no-build "./demo.sh" --build "$work/no-build"

echo "hw_validate_test: ok"
