#!/usr/bin/env bash
# Workload fidelity (issues 3 and 25): fdrill-collective's all_reduce loop
# against a plain MPI latency loop (an untimed MPI_Barrier between
# iterations, then MPI_Allreduce timed with MPI_Wtime, nothing else), on the
# 4-node emulated fabric (one rank per node), sizes 8 B to 8 MiB (x4), ITERS
# timed iterations after 5 warm-ups. fdrill runs as a drill runs it: writing
# its per-iteration metrics records and watching a stop file (never created
# here).
#
# By default both loops run side by side in one MPI job,
# build/bin/fidelity_pair (bench/fidelity_pair.cc), alternating round by
# round, the order turned round every other round, on the same buffers: a
# new job on this box lands in a state of its own that moved its medians by
# up to 10 % against the job before, for the same program, and one job
# compares the two loops under the same state. That state still favours one
# loop or the other by a few per cent at the latency-bound sizes, job by
# job (2026-12-05: at 8-128 B a job's ratio from 0.97 to 1.05, either way,
# over 22 jobs of 30 rounds: docs/performance.md, section 5), so the REPS
# rounds are shared among PAIR_JOBS jobs and pooled: 15 unless set (two
# rounds a job at the default 30, one in each order), since the job, not the
# round, is what varies. A job's ratio at a small size spreads about
# +-0.02 round 1.00; pooled over 3 jobs a size missed 1.02 in 3 of 4 runs
# (2026-12-05), over 15 the spread of the pool is about a quarter of it.
# JOBS=1 runs them as separate jobs instead, in turn, REPS times each
# (bench/mpi_allreduce_min.c against build/bin/fdrill-collective), and with
# BEFORE=PATH (another build's fdrill-collective, e.g. one of an older
# commit) that binary too, its ratios printed next to the tree's. PAIR=PATH
# runs another build's fidelity_pair (bench/fidelity_pair.cc built at an
# older commit: its fdrill loop is that commit's) in place of the tree's.
#
# Per size and round it takes
#   median = mean over ranks of each rank's median iteration time, and
#   mean   = mean over ranks of each rank's mean iteration time (what most
#            latency benchmarks print),
# fdrill's from its records (time_ms), the plain loop's from its output;
# then prints, per size, the median over the REPS rounds of each, and
#   ratio = fdrill / minimal, for the medians and for the means.
# Target: ratio <= 1.02 at every size, median and mean — the instrument must
# not perturb what it measures. Prints the load average before and after.
# Every rank is pinned to core (rank mod the cores of the box) by `taskset`
# (util-linux): 4 ranks on 2 cores otherwise land wherever the scheduler
# puts them, job by job. PIN=0 leaves placement to the scheduler.
# Needs root, a built tree, and no fabric up.
#   [PAIR=PATH | JOBS=1 [BEFORE=PATH]] [PAIR_JOBS=15] [PIN=0] [PLAIN_WORK=1|PIECES] [MAX_BYTES=2048 [BACKEND_PLAN=run]] bench/collective_fidelity.sh [REPS=30] [ITERS=200]
# (30 rounds over 15 jobs take ~7 min here; with 10 rounds a figure moved by 2-3 % from
# run to run: docs/performance.md, section 5)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-30}"
ITERS="${2:-200}"
PAIR_JOBS="${PAIR_JOBS:-$((REPS < 15 ? REPS : 15))}"
[ "$PAIR_JOBS" -ge 1 ] && [ "$PAIR_JOBS" -le "$REPS" ] || { echo "PAIR_JOBS=$PAIR_JOBS: 1 to REPS ($REPS)" >&2; exit 2; }
source bench/own_fabric.sh fidelity
$FDRILL fabric up --nodes 4 >/dev/null
for i in 1 2 3 4; do echo "198.18.0.$i slots=1"; done > "$work/hostfile"
pin=()
if [ "${PIN:-1}" != 0 ]; then
  cat > "$work/pin" <<'EOF'
#!/bin/sh
exec taskset -c $((OMPI_COMM_WORLD_RANK % $(nproc --all))) "$@"
EOF
  chmod +x "$work/pin"
  pin=("$work/pin")
fi
mpirun_argv=(mpirun --allow-run-as-root -np 4 --hostfile "$work/hostfile" --map-by ppr:1:node --bind-to none
  --mca mpi_yield_when_idle 1 --mca plm_rsh_agent "$(realpath $FDRILL) fabric rsh" --mca rtc ^hwloc
  --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include 198.18.0.0/24
  --mca oob_tcp_if_include 198.18.0.0/24)
# PLAIN_WORK=1 (an experiment): the plain loop also does fdrill's untimed
# work between its iterations (bench/fidelity_pair.cc, FIDELITY_PLAIN_WORK);
# PLAIN_WORK=settle,check,fill,record (any of them) only those pieces.
# MAX_BYTES=2048 (experiments) stops at that size: the latency-bound sizes
# alone take seconds, not minutes (fdrill's buffers still sized for 8 MiB,
# as fdrill-collective's are, unless BACKEND_PLAN=run).
if [ -n "${PLAIN_WORK:-}" ] && [ "$PLAIN_WORK" != 0 ]; then mpirun_argv+=(-x FIDELITY_PLAIN_WORK="$PLAIN_WORK"); fi
if [ -n "${MAX_BYTES:-}" ]; then
  [ "${JOBS:-0}" != 1 ] || { echo "MAX_BYTES is fidelity_pair's (not with JOBS=1)" >&2; exit 2; }
  mpirun_argv+=(-x FIDELITY_MAX_BYTES="$MAX_BYTES")
fi
if [ -n "${PLAIN_BUFFERS:-}" ]; then mpirun_argv+=(-x FIDELITY_PLAIN_BUFFERS="$PLAIN_BUFFERS"); fi
if [ -n "${BACKEND_PLAN:-}" ]; then mpirun_argv+=(-x FIDELITY_BACKEND_PLAN="$BACKEND_PLAN"); fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# fdrill's per-size "PROG <bytes> <median> <mean> ROUND" lines from the
# records in DIR: each rank's median and mean (us), then their means over
# ranks.
record_lines() {
  jq -s -r --arg prog "$2" --arg round "$3" '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor]
                       else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def mean: add / length;
    group_by(.bytes)[]
    | (group_by(.rank) | map(map(.time_ms * 1000))) as $ranks
    | "\($prog) \(.[0].bytes) \($ranks | map(median) | mean) \($ranks | map(mean) | mean) \($round)"
  ' "$1"/r*.jsonl
}
# One program's run in round REP: its per-size lines, as record_lines's.
run_one() {
  local prog=$1 rep=$2 bin
  if [ "$prog" = minimal ]; then
    $FDRILL fabric exec n0 -- "${mpirun_argv[@]}" "${pin[@]}" "$work/minimal" $((8 << 20)) "$ITERS" 5 \
      2>/dev/null | sed "s/^/minimal /; s/\$/ $rep/"
    return
  fi
  bin="$(realpath build/bin/fdrill-collective)"
  [ "$prog" = before ] && bin="$(realpath "$BEFORE")"
  rm -rf "$work/records"
  $FDRILL fabric exec n0 -- "${mpirun_argv[@]}" "${pin[@]}" "$bin" -b 8 -e 8M -f 4 -n "$ITERS" -w 5 \
    --jsonl "$work/records/r{rank}.jsonl" --stop-file "$work/stop" >/dev/null 2>&1
  record_lines "$work/records" "$prog" "$rep"
}
# The order turns round every other run (minimal, fdrill, before; then
# before, fdrill, minimal): a program's place in the run, first after the
# previous job's teardown or last, is then the same for all of them.
if [ "${JOBS:-0}" = 1 ]; then
  mpicc -O2 -o "$work/minimal" bench/mpi_allreduce_min.c
  order=(minimal fdrill ${BEFORE:+before})
  for rep in $(seq 1 "$REPS"); do
    if [ $((rep % 2)) = 1 ]; then progs=("${order[@]}"); else progs=($(printf '%s\n' "${order[@]}" | tac)); fi
    for prog in "${progs[@]}"; do run_one "$prog" "$rep" >> "$work/results"; done
  done
else
  [ -z "${BEFORE:-}" ] || { echo "BEFORE needs JOBS=1 (another build's binary is another job)" >&2; exit 2; }
  # PAIR_JOBS jobs (15 unless set), the REPS rounds shared among them,
  # numbered on across jobs.
  first=1
  for job in $(seq 1 "$PAIR_JOBS"); do
    n=$(( (REPS - first + 1) / (PAIR_JOBS - job + 1) ))
    [ "$n" -gt 0 ] || continue
    $FDRILL fabric exec n0 -- "${mpirun_argv[@]}" "${pin[@]}" "$(realpath "${PAIR:-build/bin/fidelity_pair}")" \
      "$n" "$ITERS" "$work/pair" "$first" >> "$work/results"
    for rep in $(seq "$first" $((first + n - 1))); do
      record_lines "$work/pair/round$rep" fdrill "$rep" >> "$work/results"
    done
    first=$((first + n))
  done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# Per size: the median over the rounds of each program's median and mean,
# and the ratio = the median over the rounds of that round's fdrill / plain
# (paired: the two ran side by side, in the same state of the box).
awk -v reps="$REPS" -v before="${BEFORE:+1}" '
  { med[$1, $2, $5] = $3; avg[$1, $2, $5] = $4; sizes[$2] = 1 }
  function median(list,   a, n, i, j, x) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function over_rounds(values, prog, s,   r, list) {
    list = ""
    for (r = 1; r <= reps; r++) if ((prog, s, r) in values) list = list " " values[prog, s, r]
    return median(list)
  }
  function paired(values, prog, s,   r, list) {
    list = ""
    for (r = 1; r <= reps; r++)
      if ((prog, s, r) in values && ("minimal", s, r) in values)
        list = list " " values[prog, s, r] / values["minimal", s, r]
    return median(list)
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
      rm = paired(med, "fdrill", s); ra = paired(avg, "fdrill", s)
      printf "%10d %12.2f %12.2f %7.3f %12.2f %12.2f %7.3f", s, over_rounds(med, "minimal", s),
        over_rounds(med, "fdrill", s), rm, over_rounds(avg, "minimal", s), over_rounds(avg, "fdrill", s), ra
      if (before) {
        printf " | %12.2f %7.3f %12.2f %7.3f", over_rounds(med, "before", s), paired(med, "before", s),
          over_rounds(avg, "before", s), paired(avg, "before", s)
      }
      printf "\n"
      if (rm > worst_med) { worst_med = rm; at_med = s }
      if (ra > worst_avg) { worst_avg = ra; at_avg = s }
    }
    printf "(us; each the median over %d alternating rounds; ratio: median over rounds of fdrill / minimal in the round)\n", reps
    printf "largest ratio: median %.3f (%d B), mean %.3f (%d B); target <= 1.02 at every size: %s\n",
      worst_med, at_med, worst_avg, at_avg, (worst_med <= 1.02 && worst_avg <= 1.02) ? "met" : "missed"
  }' "$work/results"
