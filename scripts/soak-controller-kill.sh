#!/usr/bin/env bash
# Soak: SIGKILL the controller mid-drill N times (default 20) and check every
# agent reverts within the lease TTL + 1 s each time. Needs root and a built
# tree (./test.sh once). Prints each revert time and the worst.
set -euo pipefail
cd "$(dirname "$0")/.."
FDRILL_SOAK_REPEATS="${1:-20}" exec build/tests/safety_e2e_test \
  --gtest_filter=SafetyE2E.KilledControllerLeavesNothingBehindWithinTtl
