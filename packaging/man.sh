#!/usr/bin/env bash
# The man pages, from what the programs and the schema say of themselves, so
# that they cannot drift from them (tests/packaging/man_test.sh checks):
#   man.sh fdrill PROGRAM OUT.1        fdrill(1): help2man of `fdrill --help`, and a
#                                      COMMANDS section with every subcommand's --help,
#                                      nested ones (fdrill fabric up) too
#   man.sh agent PROGRAM OUT.8         fdrill-agent(8): help2man of `fdrill-agent --help`
#   man.sh scenario README.md OUT.5    fdrill-scenario(5): scenarios/README.md's annotated
#                                      schema (its first ```yaml block) and the sections after it
# OUT is written gzipped (OUT.gz), as Debian installs man pages.
set -euo pipefail
what=$1
src=$2
out=$3
work=$(mktemp -d /tmp/fdrill-man.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Roff-safe text: a leading . or ' would be a request, a backslash an escape.
roff_text() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# The subcommands a help text lists: the first word of each indented line
# under "Subcommands:".
subcommands() {
  awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^[^ ]/ { on = 0 }'
}

# COMMANDS: "fdrill WORDS --help" for each subcommand, depth first.
commands_section() {
  local prog=$1
  shift
  local sub
  for sub in $("$prog" "$@" --help | subcommands); do
    printf '.SS "fdrill %s"\n.nf\n' "$*${*:+ }$sub"
    "$prog" "$@" "$sub" --help | sed -e '/^Usage: /s|^Usage: [^ ]*/fdrill|Usage: fdrill|' | roff_text
    printf '.fi\n'
    commands_section "$prog" "$@" "$sub"
  done
}

case "$what" in
  fdrill)
    {
      echo "[COMMANDS]"
      commands_section "$src"
      echo "[SEE ALSO]"
      echo ".BR fdrill-agent (8),"
      echo ".BR fdrill-scenario (5);"
      echo "the guide and reference in /usr/share/doc/fdrill/docs/."
    } > "$work/include"
    help2man -N -s 1 -n "fault-injection drills for GPU-cluster interconnects" \
      -i "$work/include" "$src" > "$work/page"
    ;;
  agent)
    {
      echo "[SEE ALSO]"
      echo ".BR fdrill (1);"
      echo "/usr/share/doc/fdrill/docs/concepts/safety.md (what the agent refuses and reverts)."
    } > "$work/include"
    help2man -N -s 8 -n "applies and reverts faults on this node for the fdrill controller" \
      -i "$work/include" "$src" > "$work/page"
    ;;
  scenario)
    {
      printf '.TH FDRILL-SCENARIO 5 "" "fdrill" "File Formats"\n'
      printf '.SH NAME\nfdrill-scenario \\- the YAML file a drill is\n'
      printf '.SH SYNOPSIS\n.nf\n'
      awk '/^```yaml/ && !done { on = 1; next } on && /^```/ { on = 0; done = 1 } on' "$src" | roff_text
      printf '.fi\n.SH DESCRIPTION\n'
      # The prose after the schema, code blocks kept as they are.
      awk '/^```yaml/ && !seen { skip = 1; seen = 1; next } skip && /^```/ { skip = 0; after = 1; next }
           after' "$src" | roff_text |
        awk '/^```/ { print (code ? ".fi" : ".nf"); code = !code; next }
             /^#+ / { sub(/^#+ /, ""); print ".SS \"" $0 "\""; next }
             /^$/ { if (!code) { print ".PP"; next } }
             { print }'
      printf '.SH SEE ALSO\n.BR fdrill (1)\n'
    } > "$work/page"
    ;;
  *)
    echo "man.sh: fdrill, agent or scenario, not $what" >&2
    exit 2
    ;;
esac
gzip -n -9 -c "$work/page" > "$out.gz"
