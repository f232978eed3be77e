#!/usr/bin/env bash
# Job fidelity (issue 50): does fdrill perturb the job it measures? The
# PyTorch DDP job (scenarios/jobs/ddp_train.py, 4 ranks over gloo, one per
# node of the 4-node emulated fabric) run STEPS steps bare — the fabric's
# own mpirun line, a 3-line shell wrapper mapping OMPI_COMM_WORLD_* to
# RANK/WORLD_SIZE at nice 10 as job-rank runs it there, no agent watching,
# no fdrill job-rank — and the same
# job under a fault-free drill (fdrill run: job-rank around each rank, the
# agents streaming its step records, the live localiser, the counters),
# alternating, ROUNDS times each, bare first, in one fabric. Each side's
# figure is the median over its steps (the first 5 left out: warm-up) of
# the job's own "elapsed time per iteration (ms)" on rank 0 — the same line
# in both, read from its output bare and from metrics.jsonl in the drill.
# Each round's ratio is its drill median over its bare median (the two run
# back to back, so a slow spell of the shared box falls on both sides more
# often than across rounds). Prints each round with the CPU the instrument
# itself took in its drill (fdrill's agents, controller, job-rank wrappers
# and fabric supervisor, sampled from /proc every 0.5 s, as a share of the
# box's cores), then
#   ratio = median of the rounds' ratios, with a bootstrap 90 % interval;
#   target <= 1.02.
# Needs root, a built tree, python3-torch, and no fabric up.
#   bench/job_fidelity.sh [ROUNDS=7] [STEPS=60]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-7}"
STEPS="${2:-60}"
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "needs python3-torch (apt-get install python3-torch)" >&2; exit 2; }
source bench/own_fabric.sh jobfid
$FDRILL fabric up --nodes 4 >/dev/null
script="$(pwd)/scenarios/jobs/ddp_train.py"
for i in 1 2 3 4; do echo "198.18.0.$i slots=1"; done > "$work/hostfile"
cat > "$work/rank" <<'EOS'
#!/bin/sh
RANK=$OMPI_COMM_WORLD_RANK WORLD_SIZE=$OMPI_COMM_WORLD_SIZE LOCAL_RANK=0 exec nice -n 10 "$@"
EOS
chmod +x "$work/rank"
cat > "$work/drill.yaml" <<EOS
# job_fidelity.sh's drill: the job alone, no fault; it ends when the job does.
name: job-fidelity
fabric:
  emulated: {nodes: 4}
workload:
  command: [/usr/bin/python3, "$script", --steps, "$STEPS"]
  framework: pytorch
  metrics: megatron
phases:
  - name: baseline
    duration: 600s
EOS
# Open MPI's flags as the fabric's own line has them (fabric/mpirun.h).
mpirun_argv=(mpirun --allow-run-as-root -np 4 --hostfile "$work/hostfile" --map-by ppr:1:node --bind-to none
  --mca mpi_yield_when_idle 1 --mca plm_rsh_agent "$(realpath $FDRILL) fabric rsh" --mca rtc ^hwloc
  --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include 198.18.0.0/24
  --mca oob_tcp_if_include 198.18.0.0/24
  -x MASTER_ADDR=198.18.0.1 -x MASTER_PORT=29500 -x GLOO_SOCKET_IFNAME=fab0 -x PYTHONUNBUFFERED=1)
median_of_lines() {  # stdin: the job's output (rank 0's lines first per step) -> median ms
  python3 -c '
import re, statistics, sys
seen, times = set(), []
for line in sys.stdin:
    m = re.search(r"iteration\s+(\d+)/.*elapsed time per iteration \(ms\):\s*([0-9.]+)", line)
    if m and int(m.group(1)) > 5 and m.group(1) not in seen:
        seen.add(m.group(1)); times.append(float(m.group(2)))
print(f"{statistics.median(times):.2f}")'
}
median_of_records() {  # a run directory -> rank 0's median step time_ms
  python3 -c '
import json, statistics, sys
t = [json.loads(l) for l in open(sys.argv[1] + "/metrics.jsonl")]
t = [r["time_ms"] for r in t if r.get("op") == "step" and r["rank"] == 0 and r["iter"] > 5]
print(f"{statistics.median(t):.2f}")' "$1"
}
instrument_cpu() {  # samples fdrill's processes until the file $1 exists; prints % of the box
  python3 - "$1" <<'EOS'
import os, sys, time
hz, cores, stop = os.sysconf("SC_CLK_TCK"), os.cpu_count(), sys.argv[1]
first, last, began, sweep = {}, {}, time.monotonic(), 0
while not os.path.exists(stop):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        if comm.startswith("fdrill"):
            fields = stat[stat.rindex(")") + 2:].split()
            ticks = int(fields[11]) + int(fields[12])  # utime + stime
            # What a process that ran before this drill (an agent) had used by then is not
            # the drill's: counted from the first sweep's reading.
            first.setdefault(pid, ticks if sweep == 0 else 0)
            last[pid] = ticks
    sweep += 1
    time.sleep(0.5)
used = sum(last[p] - first[p] for p in last)
print(f"{100.0 * used / hz / (time.monotonic() - began) / cores:.1f}")
EOS
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
ratios=()
for round in $(seq 1 "$ROUNDS"); do
  b=$($FDRILL fabric exec n0 -- "${mpirun_argv[@]}" "$work/rank" /usr/bin/python3 "$script" --steps "$STEPS" 2>&1 | median_of_lines)
  rm -f "$work/drill-done"
  instrument_cpu "$work/drill-done" > "$work/cpu-$round" &
  sampler=$!
  $FDRILL run "$work/drill.yaml" --out "$work/run-$round" --quiet >/dev/null 2>&1 || true
  touch "$work/drill-done"
  wait "$sampler"
  d=$(median_of_records "$work/run-$round")
  r=$(python3 -c "print(f'{$d / $b:.3f}')")
  echo "round $round: bare ${b} ms, under a drill ${d} ms, ratio $r; the instrument's CPU $(cat "$work/cpu-$round") % of the box"
  ratios+=("$r")
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${ratios[*]}" <<'EOS'
import random, statistics, sys
r = [float(x) for x in sys.argv[1].split()]
rng = random.Random(50)
boot = sorted(statistics.median(rng.choices(r, k=len(r))) for _ in range(2000))
lo, hi = boot[int(0.05 * len(boot))], boot[int(0.95 * len(boot)) - 1]
print(f"ratio {statistics.median(r):.3f} (median of {len(r)} rounds; bootstrap 90 % interval "
      f"{lo:.3f}-{hi:.3f}; target <= 1.02)")
EOS
