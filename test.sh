#!/usr/bin/env bash
# fdrill: install what the build needs, build into build/, run every test
# through ctest (unit tests, and as root the e2e tests on a real emulated
# fabric). Idempotent; safe to run again. Usage: ./test.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")"
. ./scripts/setup-common.sh

install_deps
# Unformatted code fails the run before anything is built (.clang-format:
# Google, 100 columns; `scripts/format.sh` formats the tree).
scripts/format.sh --check
# An include against the layers (CONTRIBUTING.md's code map) fails it too.
scripts/check-layers.py
configure_and_build
check_backends

# The e2e tests build their own emulated fabric; they need root (CI runs as
# root) and are never skipped there.
if [ "$(id -u)" -ne 0 ]; then
  echo "test.sh: not root: the e2e tests (emulated fabric) will be skipped; run as root for the full suite" >&2
elif [ -e /run/fdrill/fabric/fabric.json ]; then
  # ./demo.sh leaves its fabric up; the e2e tests bring up their own under
  # the same names and refuse to start over one that is up.
  echo "test.sh: an emulated fabric is up (./demo.sh leaves its fabric up): taking it down for the e2e tests" >&2
  build/bin/fdrill fabric down >&2
fi
# Unit tests side by side (each keeps its scratch files per process); the
# e2e, cluster and package tests one at a time: each drill test has a named
# fabric of its own and the rest hold ctest locks (tests/CMakeLists.txt), so
# `./test.sh -LE unit -j2` runs them two at a time, but on 2 cores the
# drills' measured slowdowns and hang timeouts do not hold under each
# other's load (CONTRIBUTING.md, Tests). With arguments, ctest gets exactly
# those.
if [ $# -eq 0 ]; then
  ctest --test-dir build --output-on-failure --timeout 600 -L '^unit$' -j "$(nproc)"
  ctest --test-dir build --output-on-failure --timeout 600 -LE '^unit$'
else
  ctest --test-dir build --output-on-failure --timeout 600 "$@"
fi

# libFuzzer targets (wire decoder, scenario loader; clang, ASan + UBSan) for
# a bounded time each: FDRILL_FUZZ_SECONDS (default 30; 0 skips).
if [ "${FDRILL_FUZZ_SECONDS:-30}" != "0" ]; then
  scripts/fuzz.sh "${FDRILL_FUZZ_SECONDS:-30}"
fi
