#!/usr/bin/env bash
# fdrill demo: install what it needs, build, bring up a 4-node emulated
# fabric (network namespaces on this machine), run scenarios/quickstart.yaml
# on it and print the run directory. Needs root (namespaces, tc, ip link).
# Takes about 75 s after the first build. Safe to run again: the fabric is
# rebuilt each time.
set -euo pipefail
cd "$(dirname "$0")"
. ./scripts/setup-common.sh

if [ "$(id -u)" -ne 0 ]; then
  echo "demo.sh: needs root (it builds network namespaces and shapes links)" >&2
  exit 2
fi
install_deps
configure_and_build
check_backends

FDRILL=build/bin/fdrill
# A fresh fabric each time: agents then run the binaries just built, and
# nothing a previous run (or crash) left can leak into this one.
$FDRILL fabric down >&2
$FDRILL fabric up --nodes 4 >&2

set +e
run_dir=$($FDRILL run scenarios/quickstart.yaml)
rc=$?
set -e
if [ -z "$run_dir" ]; then
  echo "demo: the drill did not run (exit $rc)" >&2
  exit "$rc"
fi
echo "demo: $(grep -o '"verdict": *"[a-z]*"' "$run_dir/summary.json") (exit $rc)" >&2
echo "demo: report: $run_dir/report.md" >&2
echo "$run_dir"
exit "$rc"
