/* The baseline for bench/collective_fidelity.sh: a plain MPI latency loop,
 * as OSU's osu_allreduce times it — MPI_Allreduce of float32 sums timed with
 * MPI_Wtime, an untimed MPI_Barrier after each — for every power of two from
 * MIN to MAX bytes, with WARMUP untimed iterations first. Nothing else runs
 * in the loop: no fill, no data check, no record.
 *   mpi_allreduce_min MAX ITERS WARMUP MIN
 * Prints one line per size: "<bytes> <mean_us> <p50_us>", each the mean
 * over ranks of that rank's own statistic (as fdrill-collective's closing
 * table: its `time` column is the mean, p50 the median). */
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
  int iters = argc > 2 ? atoi(argv[2]) : 100, warmup = argc > 3 ? atoi(argv[3]) : 5;
  long min = argc > 4 ? atol(argv[4]) : 4;
  float* in = malloc((size_t)max);
  float* out = malloc((size_t)max);
  double* t = malloc(sizeof(double) * (size_t)iters);
  memset(in, 0, (size_t)max);
  for (long bytes = min; bytes <= max; bytes *= 2) {
    int count = (int)(bytes / 4);
    for (int w = 0; w < warmup; ++w) {
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    double sum = 0;
    for (int i = 0; i < iters; ++i) {
      double s = MPI_Wtime();
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      t[i] = (MPI_Wtime() - s) * 1e6;
      sum += t[i];
      MPI_Barrier(MPI_COMM_WORLD);
    }
    qsort(t, (size_t)iters, sizeof(double), cmp);
    double stats[2] = {sum / iters,
                       iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2};
    double total[2] = {0, 0};
    MPI_Reduce(stats, total, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%ld %.3f %.3f\n", bytes, total[0] / n, total[1] / n);
  }
  free(in);
  free(out);
  free(t);
  MPI_Finalize();
  return 0;
}
