#!/usr/bin/env bash
# Workload fidelity (issue 3): fdrill-collective's all_reduce against a
# minimal MPI_Allreduce loop (bench/mpi_allreduce_min.c), in the same run, on
# the same 4-node emulated fabric, sizes 8 B to 16 MiB (x4). The programs run
# alternately REPS times; per size it prints the medians and
#   ratio  = fdrill / minimal: the target, median over sizes <= 1.02 — the
#            instrument must not perturb what it measures;
#   lineup = fdrill / minimal-lineup (the minimal loop with fdrill's untimed
#            8-byte line-up before each collective): what fdrill's fill,
#            per-iteration check and records cost beyond the line-up.
# Needs root, a built tree, and no fabric up.
#   bench/collective_fidelity.sh [REPS=3] [ITERS=50]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
ITERS="${2:-50}"
source bench/own_fabric.sh fidelity
mpicc -O2 -o "$work/minimal" bench/mpi_allreduce_min.c
mpicc -O2 -DWITH_LINEUP -o "$work/minimal-lineup" bench/mpi_allreduce_min.c
$FDRILL fabric up --nodes 4 >/dev/null
for i in 1 2 3 4; do echo "198.18.0.$i slots=1"; done > "$work/hostfile"
mpirun_argv=(mpirun --allow-run-as-root -np 4 --hostfile "$work/hostfile" --map-by ppr:1:node --bind-to none
  --mca mpi_yield_when_idle 1 --mca plm_rsh_agent "$(realpath $FDRILL) fabric rsh" --mca rtc ^hwloc
  --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include 198.18.0.0/24
  --mca oob_tcp_if_include 198.18.0.0/24)
for rep in $(seq 1 "$REPS"); do
  for prog in minimal minimal-lineup; do
    $FDRILL fabric exec n0 -- "${mpirun_argv[@]}" "$work/$prog" $((16 << 20)) "$ITERS" 5 2>/dev/null \
      | sed "s/^/$prog /" >> "$work/results"
  done
  $FDRILL fabric exec n0 -- "${mpirun_argv[@]}" "$(realpath build/bin/fdrill-collective)" \
    -b 8 -e 16M -f 4 -n "$ITERS" -w 5 2>/dev/null \
    | awk '!/^#/ && NF >= 9 {print "fdrill", $1, $6}' >> "$work/results"
done
awk '
  { t[$1 " " $2] = t[$1 " " $2] " " $3; sizes[$2] = 1 }
  function median(list,   a, n, i, j, x) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "%10s %14s %14s %14s %8s %8s\n", "bytes", "minimal (us)", "lineup (us)", "fdrill (us)", "ratio", "lineup"
    m = 0
    for (s in sizes) order[++m] = s + 0
    for (i = 2; i <= m; i++) { x = order[i]; for (j = i - 1; j >= 1 && order[j] > x; j--) order[j + 1] = order[j]; order[j + 1] = x }
    list = ""; list2 = ""
    for (i = 1; i <= m; i++) {
      s = order[i]; a = median(t["minimal " s]); l = median(t["minimal-lineup " s]); b = median(t["fdrill " s])
      printf "%10d %14.2f %14.2f %14.2f %8.3f %8.3f\n", s, a, l, b, b / a, b / l
      list = list " " b / a; list2 = list2 " " b / l
    }
    printf "median ratio over sizes: %.3f (target <= 1.02); against the lined-up loop: %.3f\n", median(list), median(list2)
  }' "$work/results"
