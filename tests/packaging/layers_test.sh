#!/usr/bin/env bash
# scripts/check-layers.py: the tree as it is passes; a scratch copy of its
# layers with one include planted the wrong way (reports/ including the
# controller) fails, naming the file, the line and what reports may use.
#   layers_test.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/fdrill-layers-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
  echo "layers_test: FAIL: $*" >&2
  exit 1
}
"$src/scripts/check-layers.py" "$src" || fail "the tree itself does not pass"
for d in common harness reports injectors agents workloads fabric; do cp -r "$src/$d" "$work/"; done
"$src/scripts/check-layers.py" "$work" || fail "a copy of the tree does not pass"
printf '#include "reports/run_dir.h"\n#include "harness/controller/drill.h"\n' > "$work/reports/planted.cc"
if "$src/scripts/check-layers.py" "$work" 2> "$work/err"; then
  fail "an include of the controller from reports/ passed"
fi
grep -qF 'reports/planted.cc:2: includes "harness/controller/drill.h" (harness/controller), but reports may use only common/core' "$work/err" ||
  fail "the refusal does not name the file, line and what reports may use: $(cat "$work/err")"
[ "$(wc -l < "$work/err")" -eq 2 ] || fail "more than the planted include refused: $(cat "$work/err")"
echo "layers_test: the tree passes; a planted include from reports/ into the controller is refused"
