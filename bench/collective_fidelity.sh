#!/usr/bin/env bash
# Workload fidelity (issue 55): fdrill-collective as a drill launches it,
# against a plain MPI latency loop in a job of its own and, where given, a
# peer benchmark, on the 4-node emulated fabric (one rank per node).
#
# Each program is its own MPI job, started with the drills' own mpirun line
# (fabric/mpirun.cc: --bind-to none, no pinning), over every power of two
# from 4 B to 16 MiB, ITERS timed iterations a size after 5 warm-ups:
#   plain         bench/mpi_allreduce_min.c: MPI_Allreduce timed with
#                 MPI_Wtime, an untimed barrier after each, nothing else
#   fdrill        fdrill-collective as a drill runs it: records written
#                 (--jsonl), a stop file watched, the ranks lined up
#                 (--lineup barrier: a barrier before and after each
#                 collective, the drills' default)
#   fdrill-none   the same with --lineup none: the collectives back to back
#   peer          PEER=PATH: a benchmark built from its public source; OSU's
#                 (osu_allreduce: "size  avg latency" rows) or Intel MPI
#                 Benchmarks' (IMB-MPI1: t_avg[usec]) output is parsed.
#                 Its arguments: PEER_ARGS, else OSU's "-m 4:16777216 -i
#                 ITERS -x 5" or IMB's "Allreduce -msglog 2:24 -iter ITERS".
# A round runs each program once, in an order that turns by one each round
# (a program's place after the previous job's teardown then evens out).
#
# Per program, size and round: the mean and the p50 of the iteration times,
# each rank's own averaged over ranks (fdrill's from its closing table, whose
# `time` is that mean, as nccl-tests' and OSU's are). Per size it prints
#   ratio = (mean over the rounds of the program's mean) /
#           (mean over the rounds of plain's mean)
# with a bootstrap 90 % interval (the rounds resampled, each with both of
# its jobs), and the same for the p50s. Target: mean ratio <= 1.02 at every
# size, the interval's upper end <= 1.04 (issue 55).
# Needs root, a built tree, and no fabric up.
#   [PEER=PATH [PEER_ARGS=...]] [PIN=1] bench/collective_fidelity.sh [ROUNDS=20] [ITERS=100]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-20}"
ITERS="${2:-100}"
MAX=$((16 << 20))
source bench/own_fabric.sh fidelity
$FDRILL fabric up --nodes 4 >/dev/null
for i in 1 2 3 4; do echo "198.18.0.$i slots=1"; done > "$work/hostfile"
mpicc -O2 -o "$work/plain" bench/mpi_allreduce_min.c
mpirun_argv=(mpirun --allow-run-as-root -np 4 --hostfile "$work/hostfile" --map-by ppr:1:node --bind-to none
  --mca mpi_yield_when_idle 1 --mca plm_rsh_agent "$(realpath $FDRILL) fabric rsh" --mca rtc ^hwloc
  --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include 198.18.0.0/24
  --mca oob_tcp_if_include 198.18.0.0/24)
# PIN=1 (not what a drill does): rank r on core r mod the box's cores.
pin=()
if [ "${PIN:-0}" = 1 ]; then
  printf '#!/bin/sh\nexec taskset -c $((OMPI_COMM_WORLD_RANK %% $(nproc --all))) "$@"\n' > "$work/pin"
  chmod +x "$work/pin"
  pin=("$work/pin")
fi
collective="$(realpath build/bin/fdrill-collective)"
progs=(plain fdrill fdrill-none)
if [ -n "${PEER:-}" ]; then
  PEER="$(realpath "$PEER")"
  case "$(basename "$PEER")" in
    IMB*) default_args="Allreduce -msglog 2:24 -iter $ITERS" ;;
    *) default_args="-m 4:$MAX -i $ITERS -x 5" ;;
  esac
  read -r -a peer_args <<< "${PEER_ARGS:-$default_args}"
  progs+=(peer)
fi

# One program's job in round ROUND: "PROG BYTES MEAN P50 ROUND" per size
# (P50 "-" where the program prints none).
run_one() {
  local prog=$1 round=$2
  local launch=($FDRILL fabric exec n0 -- "${mpirun_argv[@]}" "${pin[@]}")
  case "$prog" in
    plain) "${launch[@]}" "$work/plain" "$MAX" "$ITERS" 5 4 2>/dev/null ;;
    fdrill | fdrill-none)
      rm -rf "$work/records"
      "${launch[@]}" "$collective" -b 4 -e "$MAX" -f 2 -n "$ITERS" -w 5 \
        --lineup "$([ "$prog" = fdrill ] && echo barrier || echo none)" \
        --jsonl "$work/records/r{rank}.jsonl" --stop-file "$work/stop" 2>/dev/null |
        awk '!/^#/ && NF == 11 { print $1, $6, $7 }' ;;
    peer)
      "${launch[@]}" "$PEER" "${peer_args[@]}" 2>/dev/null | awk '
        /t_avg\[usec\]/ { imb = 1; next }
        /^#/ || NF < 2 || $1 !~ /^[0-9]+$/ || $1 == 0 { next }
        imb && NF >= 5 { print $1, $5, "-"; next }
        !imb { print $1, $2, "-" }' ;;
  esac | sed "s/^/$prog /; s/\$/ $round/"
}

echo "collective_fidelity: $ROUNDS rounds of ${progs[*]}, $ITERS iterations a size, 4 B-16 MiB;" \
  "$(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$ROUNDS"); do
  n=${#progs[@]}
  for k in $(seq 0 $((n - 1))); do
    run_one "${progs[$(((round + k) % n))]}" "$round" >> "$work/results"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work/results" <<'EOS'
import random, sys
from collections import defaultdict
rows = defaultdict(dict)  # (prog, bytes) -> round -> (mean, p50)
for line in open(sys.argv[1]):
    prog, size, mean, p50, rnd = line.split()
    rows[prog, int(size)][int(rnd)] = (float(mean), None if p50 == "-" else float(p50))
sizes = sorted({s for (p, s) in rows if p == "plain"})
progs = [p for p in ("fdrill", "fdrill-none", "peer") if any((p, s) in rows for s in sizes)]
random.seed(1)

def ratio(prog, size, col):
    common = sorted(r for r, v in rows[prog, size].items()
                    if r in rows["plain", size] and v[col] is not None)
    if not common:
        return None
    def of(sample):
        return (sum(rows[prog, size][r][col] for r in sample) /
                sum(rows["plain", size][r][col] for r in sample))
    boot = sorted(of(random.choices(common, k=len(common))) for _ in range(2000))
    return of(common), boot[100], boot[1899]

head = f"{'bytes':>9} {'plain mean':>10}"
for p in progs:
    head += f" | {p + ' mean':>16} {'ratio':>6} {'90% interval':>13} {'p50 ratio':>9}"
print(head)
worst = {p: (0, 0, 0) for p in progs}  # largest ratio, its size, largest upper end
for s in sizes:
    plain = rows["plain", s]
    line = f"{s:>9} {sum(v[0] for v in plain.values()) / len(plain):>10.2f}"
    for p in progs:
        m, q = ratio(p, s, 0), ratio(p, s, 1)
        if m is None:
            line += f" | {'-':>16} {'-':>6} {'-':>13} {'-':>9}"
            continue
        mine = rows[p, s]
        line += (f" | {sum(v[0] for v in mine.values()) / len(mine):>16.2f} {m[0]:>6.3f}"
                 f" {m[1]:>6.3f}-{m[2]:<6.3f} {q[0] if q else float('nan'):>9.3f}")
        r, at, up = worst[p]
        worst[p] = (max(r, m[0]), s if m[0] > r else at, max(up, m[2]))
    print(line)
print("(us; ratio: the program's mean over the rounds / plain's, with a bootstrap 90 % interval "
      "over the rounds; p50 ratio likewise for the medians)")
for p in progs:
    r, at, up = worst[p]
    met = r <= 1.02 and up <= 1.04
    print(f"{p}: largest mean ratio {r:.3f} ({at} B), largest interval upper end {up:.3f}; "
          f"target <= 1.02 at every size, upper end <= 1.04: {'met' if met else 'missed'}")
EOS
