/* One all-reduce across the emulated fabric; each rank prints where it ran. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  const char* tmpdir = getenv("TMPDIR");
  printf("rank %d of %d on %s TMPDIR=%s sum=%d\n", rank, size, host, tmpdir ? tmpdir : "", sum);
  MPI_Finalize();
  return 0;
}
