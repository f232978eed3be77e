// What the workload says it loaded (workloads/libraries.h): the mapped file
// from /proc/<pid>/maps, version codes, and rank 0's grouped lines.
#include "workloads/libraries.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

// Lines as the kernel writes them (proc(5)): an anonymous mapping, the
// library mapped several times, a deleted file.
constexpr char kMaps[] =
    "55d0c8a00000-55d0c8a21000 r--p 00000000 fe:01 1311 /usr/bin/fdrill-collective\n"
    "7f2b3c000000-7f2b3c021000 rw-p 00000000 00:00 0 \n"
    "7f2b3c400000-7f2b3c43a000 r--p 00000000 fe:01 2741 "
    "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4\n"
    "7f2b3c43a000-7f2b3c4b0000 r-xp 0003a000 fe:01 2741 "
    "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4\n"
    "7f2b3c600000-7f2b3c610000 r--p 00000000 fe:01 9999 /opt/nccl/lib/libnccl.so.2.28.3 (deleted)\n"
    "7ffd1e5f0000-7ffd1e611000 rw-p 00000000 00:00 0                          [stack]\n";

TEST(Libraries, TheFileTheLoaderMapped) {
  EXPECT_EQ(MappedFile(kMaps, "libmpi.so"), "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4");
  EXPECT_EQ(MappedFile(kMaps, "libnccl.so"), "/opt/nccl/lib/libnccl.so.2.28.3");
  EXPECT_EQ(MappedFile(kMaps, "libcudart.so"), "");
  // A base name, not a substring of the path.
  EXPECT_EQ(MappedFile(kMaps, "x86_64"), "");
}

TEST(Libraries, ThisProcessMapsItsOwnCLibrary) {
  EXPECT_NE(LoadedFrom("libc.so").find("/libc.so"), std::string::npos);
}

TEST(Libraries, VersionCodesAsTheLibrariesDefineThem) {
  EXPECT_EQ(NcclVersionText(22803), "NCCL 2.28.3");
  EXPECT_EQ(NcclVersionText(21903), "NCCL 2.19.3");
  EXPECT_EQ(NcclVersionText(2804), "NCCL 2.8.4");  // before 2.9: major*1000 + minor*100
  EXPECT_EQ(CudaRuntimeVersionText(13000), "CUDA runtime 13.0");
  EXPECT_EQ(CudaRuntimeVersionText(12040), "CUDA runtime 12.4");
}

TEST(Libraries, ValueIsOneLineWithThePath) {
  EXPECT_EQ(LibraryValue("Open MPI v4.1.4, package: Debian OpenMPI\n", "/usr/lib/libmpi.so.40"),
            "Open MPI v4.1.4, package: Debian OpenMPI (/usr/lib/libmpi.so.40)");
  EXPECT_EQ(LibraryValue("MPICH 4.0\tch4", ""), "MPICH 4.0 ch4");
  EXPECT_EQ(LibraryValue("", "/lib/libmpi.so"), "(/lib/libmpi.so)");
}

TEST(Libraries, RankZeroGroupsHostsByValue) {
  const std::string v4 = "Open MPI v4.1.4 (/usr/lib/libmpi.so.40.30.4)";
  const std::string v5 = "Open MPI v5.0.3 (/opt/ompi/lib/libmpi.so.40.40.3)";
  const std::string nccl = "NCCL 2.28.3 (/usr/local/cuda/lib64/libnccl.so.2.28.3)";
  std::vector<std::string> ranks = {
      EncodeRankLibraries("n0", {{"mpi", v4}, {"nccl", nccl}}),
      EncodeRankLibraries("n0", {{"mpi", v4}, {"nccl", nccl}}),  // two ranks on n0: one n0
      EncodeRankLibraries("n1", {{"mpi", v5}, {"nccl", nccl}}),
      EncodeRankLibraries("n2", {{"mpi", v4}, {"nccl", nccl}}),
      "",  // a rank that sent nothing
  };
  EXPECT_EQ(FormatLoadedLines(ranks),
            "# loaded mpi on n0, n2: " + v4 + "\n" +  //
                "# loaded mpi on n1: " + v5 + "\n" +  //
                "# loaded nccl on n0, n1, n2: " + nccl + "\n");
  EXPECT_EQ(FormatLoadedLines({}), "");
}

}  // namespace
}  // namespace fdrill
