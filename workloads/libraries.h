// Which communication libraries a run actually loaded, said in the job's
// output so a run directory records them (reports/fingerprint.h): a
// firmware/driver A/B is only about the change when the MPI and NCCL the
// ranks ran are known, and two installs on one cluster differ more often
// than anyone expects. Every rank describes its own process (the library's
// own version call, and the file the dynamic loader mapped); rank 0 gathers
// them and prints one line per distinct value, after the closing table:
//
//   # loaded mpi on n0, n1: Open MPI v4.1.4, package: Debian OpenMPI, ...
//   (/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4) # loaded nccl on n0, n1: NCCL 2.28.3
//   (/usr/local/cuda/lib64/libnccl.so.2.28.3) # loaded cudart on n0, n1: CUDA runtime 13.0
//   (/usr/local/cuda/lib64/libcudart.so.13.0.48)
//
// Hosts are in rank order of first appearance, ", "-separated; a value never
// holds a newline. The functions are pure except LoadedFrom (reads
// /proc/self/maps).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fdrill {

struct LoadedLibrary {
  std::string key;    // "mpi", "nccl", "cudart"
  std::string value;  // "NCCL 2.28.3 (/usr/local/cuda/lib64/libnccl.so.2.28.3)"
};

// The file of the first mapping in `maps` (/proc/<pid>/maps text) whose
// base name starts with `soname` ("libmpi.so"); "" when none. The kernel
// shows the file it mapped, symlinks resolved: the version in the name is
// the one loaded, not the one linked against.
std::string MappedFile(std::string_view maps, std::string_view soname);
// The same for this process.
std::string LoadedFrom(std::string_view soname);

// "NCCL 2.28.3" from ncclGetVersion()'s code (major*10000 + minor*100 +
// patch since 2.9; major*1000 + minor*100 + patch before).
std::string NcclVersionText(int code);

// "CUDA runtime 13.0" from cudaRuntimeGetVersion()'s code (1000*major +
// 10*minor).
std::string CudaRuntimeVersionText(int code);

// "VERSION (PATH)", or VERSION alone when the path is unknown; newlines and
// tabs become spaces, trailing spaces go.
std::string LibraryValue(std::string_view version, std::string_view path);

// One rank's description, the unit gathered to rank 0.
std::string EncodeRankLibraries(std::string_view host, const std::vector<LoadedLibrary>& libs);
// Rank 0: the "# loaded ..." lines (each ending in '\n') from every rank's
// encoding, in rank order. Undecodable entries are skipped.
std::string FormatLoadedLines(const std::vector<std::string>& ranks);

}  // namespace fdrill
