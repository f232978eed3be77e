#!/usr/bin/env bash
# Injection latency, a flap's length on the wire, and the idle footprint of
# one real fdrill-agent (issues 9, 25), on a node of its own: a network
# namespace fdp-<pid> with a management veth (mgmt0, 198.18.200.2/30, peer
# fdpm<pid> 198.18.200.1 in this namespace) and a fabric veth fab0
# (198.18.200.5/30) whose other end fab1 (198.18.200.6/30) is in a peer
# namespace fdpp-<pid>. The real agent code path (rtnetlink), mutual TLS.
# Everything is removed on exit, also on failure. Needs root; does not touch
# the emulated fabric (fdrill-*). FDP_FLAPS (20) and FDP_FLAP_MS (100) size
# the wire measurement.
#
#   sudo bench/agent_bench.sh [BUILD_DIR] [COUNT] [FOOTPRINT_SECONDS]
#   (defaults: build, 200, 60)
# The agent's state dir (its journal, synced before every apply) is made
# under $FDP_STATE_ROOT, default /tmp: a disk here. FDP_STATE_ROOT=/dev/shm
# shows what the sync costs on this box's disk. FDP_AGENT_NICE=-10 runs the
# agent at that nice value.
set -euo pipefail
build=${1:-build}
count=${2:-200}
seconds=${3:-60}
bin=$(cd "$build/bin" && pwd)
ns=fdp-$$
peer_ns=fdpp-$$
host_if=fdpm$$
node=fdpn$$
tmp=$(mktemp -d "${FDP_STATE_ROOT:-/tmp}/fdp-agent-bench.XXXXXX")
agent_pid=

cleanup() {
  local rc=$?
  if [[ $rc -ne 0 && -s $tmp/agent.log ]]; then
    echo "agent_bench.sh failed ($rc); the agent's log:" >&2
    cat "$tmp/agent.log" >&2
  fi
  if [[ -n $agent_pid ]]; then
    kill "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
  fi
  ip netns del "$ns" 2>/dev/null || true
  ip netns del "$peer_ns" 2>/dev/null || true
  ip link del "$host_if" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

ip netns add "$ns"
ip link add "$host_if" type veth peer name mgmt0 netns "$ns"
ip addr add 198.18.200.1/30 dev "$host_if"
ip link set "$host_if" up
ip -n "$ns" link set lo up
ip -n "$ns" addr add 198.18.200.2/30 dev mgmt0
ip -n "$ns" link set mgmt0 up
ip -n "$ns" link add fab0 type veth peer name fab1
ip -n "$ns" addr add 198.18.200.5/30 dev fab0
ip -n "$ns" link set fab0 up
# fab1 is the peer's end, in a namespace of its own: the flap is timed there.
ip netns add "$peer_ns"
ip -n "$ns" link set fab1 netns "$peer_ns"
ip -n "$peer_ns" addr add 198.18.200.6/30 dev fab1
ip -n "$peer_ns" link set fab1 up

"$bin/agent_bench" pki "$tmp/pki" "$node" >/dev/null
nice -n "${FDP_AGENT_NICE:-0}" ip netns exec "$ns" "$bin/fdrill-agent" --node "$node" --listen 198.18.200.2:7300 --state-dir "$tmp/state" \
  --allow fab0 --tls-ca "$tmp/pki/ca.pem" --tls-cert "$tmp/pki/$node.pem" --tls-key "$tmp/pki/$node.key" \
  --log-level warn 2>"$tmp/agent.log" &
agent_pid=$!
for _ in $(seq 50); do
  ip netns exec "$ns" ss -ltn 2>/dev/null | grep -q 198.18.200.2:7300 && break
  sleep 0.1
done

target=(--agent 198.18.200.2:7300 --node "$node" --pki "$tmp/pki")
echo "## injection latency: $count applies each, controller -> agent over mutual TLS, rtnetlink on a veth"
echo
"$bin/agent_bench" inject "${target[@]}" --count "$count"
echo
echo "## a ${FDP_FLAP_MS:-100} ms link_flap on the wire: ${FDP_FLAPS:-20} flaps, UDP every 200 us from fab0, kernel receive times at the peer"
echo
"$bin/agent_bench" flapwire "${target[@]}" --sender-ns "$ns" --receiver-ns "$peer_ns" --to 198.18.200.6 \
  --count "${FDP_FLAPS:-20}" --down-ms "${FDP_FLAP_MS:-100}"
echo
echo "## agent footprint: idle, lease renewed every second, counters pushed at 1 Hz, $seconds s"
echo
"$bin/agent_bench" footprint "${target[@]}" --pid "$agent_pid" --seconds "$seconds"
if [[ -s $tmp/agent.log ]]; then
  echo
  echo "agent log:"
  cat "$tmp/agent.log"
fi
