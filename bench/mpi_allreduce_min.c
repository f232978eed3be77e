/* The baseline for bench/collective_fidelity.sh: a plain MPI latency loop,
 * as OSU's osu_allreduce and most latency benchmarks time it — an untimed
 * MPI_Barrier between iterations, then MPI_Allreduce of float32 sums timed
 * with MPI_Wtime — per size from 8 B to MAX (x4 steps), with the same
 * warm-up and iteration counts as fdrill-collective. Nothing else runs in
 * the loop: no fill, no data check, no record.
 * Prints one line per size: "<bytes> <median_us> <mean_us>", where median
 * (mean) = the mean over ranks of each rank's median (mean) iteration time:
 * the median is what fdrill-collective's closing table reports, the mean
 * what latency benchmarks print. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  long max = argc > 1 ? atol(argv[1]) : 16L << 20;
  int iters = argc > 2 ? atoi(argv[2]) : 50, warmup = argc > 3 ? atoi(argv[3]) : 5;
  float* in = malloc((size_t)max);
  float* out = malloc((size_t)max);
  double* t = malloc(sizeof(double) * (size_t)iters);
  memset(in, 0, (size_t)max);
  for (long bytes = 8; bytes <= max; bytes *= 4) {
    int count = (int)(bytes / 4);
    for (int w = 0; w < warmup; ++w)
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double sum = 0;
    for (int i = 0; i < iters; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      double s = MPI_Wtime();
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      t[i] = (MPI_Wtime() - s) * 1e6;
      sum += t[i];
    }
    qsort(t, (size_t)iters, sizeof(double), cmp);
    double stats[2] = {iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2,
                       sum / iters};
    double total[2] = {0, 0};
    MPI_Reduce(stats, total, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%ld %.2f %.2f\n", bytes, total[0] / n, total[1] / n);
  }
  free(in);
  free(out);
  free(t);
  MPI_Finalize();
  return 0;
}
