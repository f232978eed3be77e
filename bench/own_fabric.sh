# Sourced (from the tree's root) by the benchmarks that build an emulated
# fabric of their own: collective_fidelity.sh, detection_latency.sh.
#   source bench/own_fabric.sh NAME
# Refuses (exit 2) unless run as root with no fabric up. Sets FDRILL (the
# built fdrill) and work (a fresh directory /tmp/fdrill-NAME.XXXXXX); on
# exit, whatever happened, takes the fabric down and removes work (kept,
# and its path printed, with FDRILL_KEEP=1). The caller brings the fabric
# up itself.
FDRILL="${FDRILL:-build/bin/fdrill}"  # a test gives its own build's
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 2; }
if [ -e /run/fdrill/fabric/fabric.json ]; then
  echo "a fabric is already up; this benchmark builds its own (fdrill fabric down first)" >&2
  exit 2
fi
work=$(mktemp -d "/tmp/fdrill-$1.XXXXXX")
cleanup() {
  $FDRILL fabric down >/dev/null 2>&1 || true
  if [ "${FDRILL_KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
