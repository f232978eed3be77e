#!/usr/bin/env bash
# Soak: SIGKILL the faulted node's agent mid-fault N times (default 20) on the
# emulated fabric, and measure how long until the fabric is exactly as it was
# before (every node's and switch's qdiscs, links, nft ruleset and iptables
# rules) with nobody's help: the fabric's supervisor starts the agent again
# and its start-up journal sweep reverts the fault (issue 21).
#
#   scripts/soak-agent-kill.sh [N]
#
# Uses the fabric that is up (it must have a supervisor and at least 2
# nodes), or brings up a 4-node one and tears it down at the end. Each run:
# a short drill caps n1's fab0 to 100 Mbit/s for 30 s; once the fault is
# applied, n1's agent (its pid from `fdrill fabric status --json`) gets
# SIGKILL, and the fabric is compared with its snapshot every 50 ms. Prints
# each run's time to clean and the worst; exits 1 when a run took more than
# 10 s, left the fabric different, or its drill's summary lists residue or
# does not say the fault was swept. Needs root and a built tree (build/bin).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
limit_s=10
fdrill="$PWD/build/bin/fdrill"
[ -x "$fdrill" ] || { echo "soak: $fdrill is not built (./test.sh once)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "soak: needs root (network namespaces)" >&2; exit 2; }

work=$(mktemp -d /tmp/fdrill-soak-agent-kill.XXXXXX)
made_fabric=0
controller=""
cleanup() {
  if [ -n "$controller" ] && kill -0 "$controller" 2>/dev/null; then
    kill -TERM "$controller" 2>/dev/null || true
    wait "$controller" 2>/dev/null || true
  fi
  if [ "$made_fabric" = 1 ]; then "$fdrill" fabric down >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if ! "$fdrill" fabric status --json | jq -e '.nodes | length > 0' >/dev/null; then
  "$fdrill" fabric up --nodes 4 >/dev/null
  made_fabric=1
fi
status() { "$fdrill" fabric status --json; }
if [ "$(status | jq '.supervisor_alive')" != true ]; then
  echo "soak: the fabric up has no live supervisor; \`fdrill fabric down\` and up again" >&2
  exit 2
fi
nodes=$(status | jq '.nodes | length')
mapfile -t namespaces < <(status | jq -r '.nodes[].netns, .switches[].netns')

# Everything a fault can leave behind, in every namespace of the fabric.
# Counters are left out (iptables-save's [packets:bytes], its dated comments).
snapshot() {
  for ns in "${namespaces[@]}"; do
    echo "== $ns"
    ip -n "$ns" -br link show 2>&1 || true
    tc -n "$ns" qdisc show 2>&1 || true
    ip netns exec "$ns" nft list ruleset 2>&1 || true
    ip netns exec "$ns" iptables-save 2>&1 | sed -e '/^#/d' -e 's/\[[0-9]*:[0-9]*\]//' || true
  done
}

cat >"$work/kill.yaml" <<EOF
# soak-agent-kill: n1's fab0 capped long enough for its agent to be killed mid-fault.
name: soak-agent-kill
fabric: {emulated: {nodes: $nodes}}
workload: {size: 1M}
phases:
  - {name: baseline, duration: 3s}
  - name: hold
    duration: 30s
    faults:
      - {id: cap, kind: link_rate, node: n1, params: {interface: fab0, rate: 100mbit}}
  - {name: recovery, duration: 2s}
safety: {lease_ttl: 3s, lease_renew: 1s}
EOF

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
greater() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
before=$(snapshot)
worst=0
failed=0
for i in $(seq 1 "$runs"); do
  out="$work/run-$i"
  "$fdrill" run "$work/kill.yaml" --out "$out" >"$work/controller-$i.log" 2>&1 &
  controller=$!
  for _ in $(seq 1 600); do
    grep -q '"type":"fault_applied"' "$out/events.jsonl" 2>/dev/null && break
    kill -0 "$controller" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q '"type":"fault_applied"' "$out/events.jsonl" 2>/dev/null; then
    echo "run $i: the fault was never applied; controller log:" >&2
    cat "$work/controller-$i.log" >&2
    exit 1
  fi
  pid=$(status | jq '.nodes[1].agent_pid')
  killed_at=$(now)
  kill -KILL "$pid"
  clean=""
  while :; do
    t=$(since "$killed_at")
    if [ "$(snapshot)" = "$before" ]; then clean=$t; break; fi
    if greater "$t" $((limit_s + 5)); then break; fi
    sleep 0.05
  done
  wait "$controller" || true
  controller=""
  residue=$(jq '.residue | length' "$out/summary.json" 2>/dev/null || echo "?")
  swept=$(jq '[.agents_lost[]?.faults_left[]? | select(.swept_at_s != null)] | length' \
    "$out/summary.json" 2>/dev/null || echo 0)
  restarts=$(status | jq '.nodes[1].agent_restarts')
  if [ -z "$clean" ]; then
    echo "run $i: agent pid $pid killed; fabric NOT clean after $((limit_s + 5)) s"
    diff <(echo "$before") <(snapshot) || true
    failed=1
    continue
  fi
  verdict=ok
  if greater "$clean" "$limit_s" || [ "$residue" != 0 ] || [ "$swept" = 0 ]; then
    verdict=FAIL
    failed=1
  fi
  printf 'run %d: agent pid %s killed; fabric clean again after %.3f s (residue %s, swept %s, n1 restarts %s) %s\n' \
    "$i" "$pid" "$clean" "$residue" "$swept" "$restarts" "$verdict"
  if greater "$clean" "$worst"; then worst=$clean; fi
done
printf 'worst: %.3f s over %d runs (limit %d s)\n' "$worst" "$runs" "$limit_s"
exit "$failed"
