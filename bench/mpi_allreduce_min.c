/* The baseline for bench/collective_fidelity.sh: the least code that times
 * MPI_Allreduce of float32 sums, per size from 8 B to MAX (x4 steps), with
 * the same warm-up and iteration counts as fdrill-collective. Prints one
 * line per size: "<bytes> <time_us>", time = mean over ranks of each rank's
 * median iteration time (what fdrill-collective's closing table reports).
 * Built with -DWITH_LINEUP it also runs, untimed, one MPI_Allreduce (MAX) of
 * an int64 before each timed collective, as fdrill-collective's stop
 * agreement lines its ranks up, to separate what the line-up changes from
 * what fdrill-collective's fill, check and records cost. */
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
    for (int i = 0; i < iters; ++i) {
#ifdef WITH_LINEUP
      long long flag = 0, any = 0;
      MPI_Allreduce(&flag, &any, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
#endif
      double s = MPI_Wtime();
      MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      t[i] = (MPI_Wtime() - s) * 1e6;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp);
    double median = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2, sum = 0;
    MPI_Reduce(&median, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%ld %.2f\n", bytes, sum / n);
  }
  free(in);
  free(out);
  free(t);
  MPI_Finalize();
  return 0;
}
