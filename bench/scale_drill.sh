#!/usr/bin/env bash
# A whole drill at scale (issue 24): `fdrill run` of one scenario against N
# fake-host agents, as an operator runs it on a cluster — a hosts file of
# node names, the names resolved through /etc/hosts, mutual TLS with a
# certificate per node, launcher none — and the wall time of each of its
# steps.
#
#   bench/scale_drill.sh N [--bin DIR] [--port PORT] [--out DIR] [--lease-ttl DURATION]
#
# The agents: one `fdrill-agent --fake-host --fake-agents N` process
# (agents/fake_fleet.h): node f<i> on 127.1.0.1 + i, each its own listener,
# certificate (CN = f<i>), journal, audit log and lease; faults recorded on a
# model of ip and tc, never applied. Their state lives under /dev/shm: on a
# cluster each agent fsyncs its own disk, here N fsyncs per fan-out on one
# shared disk would measure that disk.
# The names: `fdrill run` runs in a mount namespace of its own with a copy
# of /etc/hosts, plus a line per agent, bound over /etc/hosts (as
# tests/e2e/launcher_e2e_test.cc does; the machine's /etc/hosts is not
# changed). As root that is `unshare --mount`; otherwise a user namespace
# (`unshare --user --map-root-user --mount`) where the kernel allows one.
# The drill: 3 s baseline, 3 s with link_rate 100mbit on fab0 of every node
# (node: all, N faults), 3 s recovery; the workload is a script on the
# controller's host printing nccl-tests' result table (output: nccl-tests),
# a row every 50 ms, each row a record in metrics.jsonl. It never slows
# down, so the drill meets its expectation (max_slowdown 2) and exits 0.
# --lease-ttl sets safety.lease_ttl (default 5s): at 1,000 agents the
# sequential connect and apply outlast 5 s (docs/performance.md).
#
# Printed: the wall time of `fdrill plan` and of `fdrill run`, and of each
# step of the run, from its events.jsonl (times relative to the run's
# recorder, which starts once every agent is connected, leased and has
# checked its faults) and the file times of its run directory; the
# controller's peak RSS (GNU time, the run's process, where installed); the
# load average.
# With --out the run directory is kept there (tests/e2e/scale_drill_test.cc
# reads it); otherwise everything is removed. Every process it starts is
# stopped by pid on exit, also on failure; the fleet also gets SIGTERM if
# this script dies (setpriv --pdeathsig). One fleet process serves at most
# ~5,000 agents here (RLIMIT_NOFILE, agents/fake_fleet.h).
set -euo pipefail

usage() {
  echo "usage: $0 N [--bin DIR] [--port PORT] [--out DIR] [--lease-ttl DURATION]" >&2
  exit 2
}
[[ $# -ge 1 && $1 =~ ^[0-9]+$ && $1 -ge 1 ]] || usage
n=$1
shift
bin=$(cd "$(dirname "$0")/.." && pwd)/build/bin
port=7320
out=
lease_ttl=
while [[ $# -gt 0 ]]; do
  case $1 in
    --bin) bin=$(cd "$2" && pwd); shift 2 ;;
    --port) port=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --lease-ttl) lease_ttl=$2; shift 2 ;;
    *) usage ;;
  esac
done
for tool in jq setpriv unshare; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done
if [[ $(id -u) -eq 0 ]]; then
  names_ns=(unshare --mount)
else
  names_ns=(unshare --user --map-root-user --mount)
fi

work=$(mktemp -d /dev/shm/fdrill-scale.XXXXXX)
run_dir=${out:-$work/run}
fleet_pid=
run_pid=
cleanup() {
  local rc=$?
  # The run first (GNU time; fdrill gets SIGTERM when it goes, and reverts
  # and stops its workload), then the fleet (which reverts every agent).
  if [[ -n $run_pid ]]; then
    kill -TERM "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
  fi
  if [[ -n $fleet_pid ]]; then
    kill -TERM "$fleet_pid" 2>/dev/null || true
    wait "$fleet_pid" 2>/dev/null || true
  fi
  if [[ $rc -ne 0 ]]; then
    for log in fleet.err run.err; do
      [[ -s $work/$log ]] && { echo "--- $log (last lines)" >&2; tail -n 20 "$work/$log" >&2; }
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Certificates: a CA and the controller's; the fleet issues each node's.
"$bin/fdrill" certs init --dir "$work/pki" >/dev/null
"$bin/fdrill" certs issue controller --role controller --dir "$work/pki" >/dev/null

t=$(now)
setpriv --pdeathsig TERM "$bin/fdrill-agent" --fake-host --fake-agents "$n" \
  --fake-ca "$work/pki" --listen "127.1.0.1:$port" --state-dir "$work/state" \
  --log-level warn >"$work/fleet.out" 2>"$work/fleet.err" &
fleet_pid=$!
until grep -q "fake agents ready" "$work/fleet.out" 2>/dev/null; do
  kill -0 "$fleet_pid" 2>/dev/null || { echo "$0: the fleet exited" >&2; fleet_pid=; exit 2; }
  sleep 0.1
done
fleet_s=$(secs "$t" "$(now)")

# Agent i's address, as FakeAgentAddress computes it from 127.1.0.1: host
# parts 1..254 of 127.1.0, then of 127.1.1, ...
{
  cat /etc/hosts
  for ((i = 0; i < n; i++)); do
    echo "127.1.$((i / 254)).$((i % 254 + 1)) f$i"
  done
} >"$work/etc-hosts"
echo "f[0-$((n - 1))]" >"$work/hosts"
cat >"$work/fake_perf.sh" <<'EOF'
#!/bin/sh
echo "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "
while :; do
  echo "     1048576        262144     float     sum      -1    52.10   20.13   37.74      0    51.90   20.20   37.88      0"
  sleep 0.05
done
EOF
cat >"$work/drill.yaml" <<EOF
# Generated by bench/scale_drill.sh: one fault on every one of $n fake agents.
name: scale-drill
fabric: {hosts: hosts, agent_port: $port}
workload:
  command: [sh, $work/fake_perf.sh]
  output: nccl-tests
  launcher: none
  transport: tcp
phases:
  - {name: baseline, duration: 3s}
  - name: hit
    duration: 3s
    faults:
      - {id: cap, kind: link_rate, node: all, params: {interface: fab0, rate: 100mbit}}
  - {name: recovery, duration: 3s}
safety:
  max_faulted_nodes: $n
${lease_ttl:+  lease_ttl: $lease_ttl
}expect:
  max_slowdown: 2
EOF

t=$(now)
"$bin/fdrill" plan "$work/drill.yaml" >"$work/plan.out"
plan_s=$(secs "$t" "$(now)")

# `fdrill run` where the names resolve; GNU time reports the run's peak RSS
# (setpriv, unshare and sh exec into it: one process, which gets SIGTERM
# if GNU time goes, as GNU time does if this script goes).
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
t=$(now)
rc=0
# Without GNU time (Debian's `time`), no RSS figure.
timed=()
[[ -x /usr/bin/time ]] && timed=(setpriv --pdeathsig TERM /usr/bin/time -v -o "$work/time.txt")
"${timed[@]}" setpriv --pdeathsig TERM "${names_ns[@]}" sh -c \
  'mount --bind "$1" /etc/hosts && exec "$2" run "$3" --tls-dir "$4" --out "$5"' \
  sh "$work/etc-hosts" "$bin/fdrill" "$work/drill.yaml" "$work/pki" "$run_dir" \
  >"$work/run.out" 2>"$work/run.err" &
run_pid=$!
wait "$run_pid" || rc=$?
run_pid=
t_end=$(now)
run_s=$(secs "$t" "$t_end")
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
if [[ $rc -ne 0 ]]; then
  echo "$0: fdrill run exited $rc" >&2
  exit "$rc"
fi

ev=$run_dir/events.jsonl
first() { jq -rs --arg ty "$1" '[.[] | select(.type == $ty) | .t] | min // empty' "$ev"; }
last() { jq -rs --arg ty "$1" '[.[] | select(.type == $ty) | .t] | max // empty' "$ev"; }
phase_t() { jq -rs --arg ty "$1" --arg ph "$2" \
  '[.[] | select(.type == $ty and .phase == $ph) | .t] | min // empty' "$ev"; }
count() { jq -s --arg ty "$1" '[.[] | select(.type == $ty)] | length' "$ev"; }
# The recorder's start on this script's clock: events.jsonl's last write is
# drill_end's line.
events_mtime=$(stat -c %.9Y "$ev")
rec_start=$(awk -v m="$events_mtime" -v e="$(last drill_end)" 'BEGIN { printf "%.6f", m - e }')

applied=$(count fault_applied)
reverted=$(count fault_reverted)
residue=$(jq -s '[.[] | select(.type == "residue") | .items | length] | add' "$ev")
rss="n/a (no /usr/bin/time)"
if [[ -s $work/time.txt ]]; then
  rss="$(($(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time.txt") / 1024)) MiB"
fi
verdict=$(jq -r '.verdict' "$run_dir/summary.json")

echo "scale_drill: $n agents, $(nproc) cores, load average $load_before before, $load_after after"
printf '%-44s %8s\n' "step" "wall s"
printf '%-44s %8s\n' "fleet start (not the drill)" "$fleet_s"
printf '%-44s %8s\n' "fdrill plan" "$plan_s"
printf '%-44s %8s\n' "run: load, connect + hello + lease, check" "$(secs "$t" "$rec_start")"
printf '%-44s %8s\n' "run: inventory, run files" "$(secs 0 "$(last drill_start)")"
printf '%-44s %8s\n' "run: snapshot" "$(secs "$(last drill_start)" "$(last snapshot)")"
printf '%-44s %8s\n' "run: workload start" "$(secs "$(last snapshot)" "$(phase_t phase_start baseline)")"
printf '%-44s %8s\n' "run: apply ($applied faults)" \
  "$(secs "$(phase_t phase_start hit)" "$(last fault_applied)")"
printf '%-44s %8s\n' "run: revert ($reverted faults)" \
  "$(secs "$(first fault_revert)" "$(last fault_reverted)")"
printf '%-44s %8s\n' "run: stop workload, revert_all, residue" \
  "$(secs "$(phase_t phase_end recovery)" "$(last residue)")"
printf '%-44s %8s\n' "run: residue -> drill_end" "$(secs "$(last residue)" "$(last drill_end)")"
printf '%-44s %8s\n' "run: report (drill_end -> exit)" "$(secs "$events_mtime" "$t_end")"
printf '%-44s %8s\n' "fdrill run, total" "$run_s"
echo "timeline: $(secs 0 "$(phase_t phase_start baseline)") s to the first phase, phases 9 s planned," \
  "$(secs "$(phase_t phase_start baseline)" "$(phase_t phase_end recovery)") s taken"
echo "controller peak RSS: $rss; verdict $verdict; residue items $residue"
echo "events.jsonl: $(stat -c %s "$ev") bytes, $(count counters) counters events" \
  "($(jq -s '[.[] | select(.type == "counters" and .delta == true)] | length' "$ev") of them deltas)"
