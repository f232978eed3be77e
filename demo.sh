#!/usr/bin/env bash
# fdrill demo: install what it needs (FDRILL_DEMO_PACKAGES), build fdrill's
# programs (no tests or benchmarks: ./test.sh builds those), bring up a
# 4-node emulated fabric (network namespaces on this machine), run
# scenarios/quickstart.yaml on it and end with its summary. Needs root
# (namespaces, tc, ip link). Safe to run again: the fabric is rebuilt each
# time.
set -euo pipefail
cd "$(dirname "$0")"
. ./scripts/setup-common.sh

if [ "$(id -u)" -ne 0 ]; then
  echo "demo.sh: needs root (it builds network namespaces and shapes links)" >&2
  exit 2
fi
install_deps demo
configure_and_build demo
check_backends

FDRILL=build/bin/fdrill
# A fresh fabric each time: agents then run the binaries just built, and
# nothing a previous run (or crash) left can leak into this one.
$FDRILL fabric down >&2
$FDRILL fabric up --nodes 4 >&2

# The run directory on stdout, then fdrill's one-screen summary on stderr
# (verdict, each fault's slowdown and recovery, the report's path) as the
# last lines; the drill's exit code (0 pass, 1 fail, 2 error).
exec $FDRILL run scenarios/quickstart.yaml
