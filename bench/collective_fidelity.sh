#!/usr/bin/env bash
# Workload fidelity (issues 3 and 25): fdrill-collective's all_reduce against
# a plain MPI latency loop (bench/mpi_allreduce_min.c: an untimed
# MPI_Barrier between iterations, nothing else in the loop), in the same run,
# on the same 4-node emulated fabric, sizes 8 B to 8 MiB (x4). fdrill runs as
# a drill runs it: writing its per-iteration metrics records (--jsonl) and
# watching a stop file (--stop-file, never created here). The two programs
# run alternately REPS times. Per size and run it takes
#   median = mean over ranks of each rank's median iteration time, and
#   mean   = mean over ranks of each rank's mean iteration time (what most
#            latency benchmarks print),
# fdrill's from its records (time_ms), the minimal loop's from its output;
# then prints, per size, the median over the REPS runs of each, and
#   ratio = fdrill / minimal, for the medians and for the means.
# Target: ratio <= 1.02 at every size, median and mean — the instrument must
# not perturb what it measures. Prints the load average before and after.
# With BEFORE=PATH (another build's fdrill-collective, e.g. one of an older
# commit) that binary runs too, in turn with the others, and its ratios are
# printed next to the tree's: before / after in the same run.
# Needs root, a built tree, and no fabric up.
#   [BEFORE=PATH] bench/collective_fidelity.sh [REPS=3] [ITERS=50]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
ITERS="${2:-50}"
source bench/own_fabric.sh fidelity
mpicc -O2 -o "$work/minimal" bench/mpi_allreduce_min.c
$FDRILL fabric up --nodes 4 >/dev/null
for i in 1 2 3 4; do echo "198.18.0.$i slots=1"; done > "$work/hostfile"
mpirun_argv=(mpirun --allow-run-as-root -np 4 --hostfile "$work/hostfile" --map-by ppr:1:node --bind-to none
  --mca mpi_yield_when_idle 1 --mca plm_rsh_agent "$(realpath $FDRILL) fabric rsh" --mca rtc ^hwloc
  --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include 198.18.0.0/24
  --mca oob_tcp_if_include 198.18.0.0/24)
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$REPS"); do
  $FDRILL fabric exec n0 -- "${mpirun_argv[@]}" "$work/minimal" $((8 << 20)) "$ITERS" 5 2>/dev/null \
    | sed "s/^/minimal /" >> "$work/results"
  for prog in fdrill ${BEFORE:+before}; do
    bin="$(realpath build/bin/fdrill-collective)"
    [ "$prog" = before ] && bin="$(realpath "$BEFORE")"
    rm -rf "$work/records"
    $FDRILL fabric exec n0 -- "${mpirun_argv[@]}" "$bin" -b 8 -e 8M -f 4 -n "$ITERS" -w 5 \
      --jsonl "$work/records/r{rank}.jsonl" --stop-file "$work/stop" >/dev/null 2>&1
    # Per size: each rank's median and mean (us), then their means over ranks.
    jq -s -r --arg prog "$prog" '
      def median: sort | if length % 2 == 1 then .[length / 2 | floor]
                         else (.[length / 2 - 1] + .[length / 2]) / 2 end;
      def mean: add / length;
      group_by(.bytes)[]
      | (group_by(.rank) | map(map(.time_ms * 1000))) as $ranks
      | "\($prog) \(.[0].bytes) \($ranks | map(median) | mean) \($ranks | map(mean) | mean)"
    ' "$work"/records/r*.jsonl >> "$work/results"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v reps="$REPS" -v before="${BEFORE:+1}" '
  { med[$1 " " $2] = med[$1 " " $2] " " $3; avg[$1 " " $2] = avg[$1 " " $2] " " $4; sizes[$2] = 1 }
  function median(list,   a, n, i, j, x) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "%10s %12s %12s %7s %12s %12s %7s", "bytes", "minimal p50", "fdrill p50", "ratio",
      "minimal mean", "fdrill mean", "ratio"
    if (before) printf " | %12s %7s %12s %7s", "before p50", "ratio", "before mean", "ratio"
    printf "\n"
    m = 0
    for (s in sizes) order[++m] = s + 0
    for (i = 2; i <= m; i++) { x = order[i]; for (j = i - 1; j >= 1 && order[j] > x; j--) order[j + 1] = order[j]; order[j + 1] = x }
    worst_med = 0; worst_avg = 0
    for (i = 1; i <= m; i++) {
      s = order[i]
      a = median(med["minimal " s]); b = median(med["fdrill " s])
      c = median(avg["minimal " s]); d = median(avg["fdrill " s])
      printf "%10d %12.2f %12.2f %7.3f %12.2f %12.2f %7.3f", s, a, b, b / a, c, d, d / c
      if (before) {
        e = median(med["before " s]); f = median(avg["before " s])
        printf " | %12.2f %7.3f %12.2f %7.3f", e, e / a, f, f / c
      }
      printf "\n"
      if (b / a > worst_med) { worst_med = b / a; at_med = s }
      if (d / c > worst_avg) { worst_avg = d / c; at_avg = s }
    }
    printf "(us; each the median over %d alternating runs)\n", reps
    printf "largest ratio: median %.3f (%d B), mean %.3f (%d B); target <= 1.02 at every size: %s\n",
      worst_med, at_med, worst_avg, at_avg, (worst_med <= 1.02 && worst_avg <= 1.02) ? "met" : "missed"
  }' "$work/results"
