// Hostlist expressions as Slurm writes them (scontrol show hostnames):
//   gpu[01-04]            gpu01 gpu02 gpu03 gpu04   (width of the low bound kept)
//   gpu[01-03,07]         gpu01 gpu02 gpu03 gpu07
//   rack[1-2]-gpu[1-2]    rack1-gpu1 rack1-gpu2 rack2-gpu1 rack2-gpu2
//   n0,n2,gpu[1-2]        commas outside brackets separate expressions
// Pure; no I/O. Order is the expression's order; duplicates are an error
// (a host named twice in one selection is almost always a typo).
#pragma once

#include <string>
#include <vector>

#include "common/core/result.h"

namespace fdrill {

// At most this many hosts from one expression: a larger one is a typo
// (gpu[1-1000000]) long before it is a cluster.
inline constexpr size_t kMaxHostlistHosts = 100000;

// Expands EXPR. Errors say what is wrong and at which character (1-based):
// "gpu[3-1]: range 3-1 runs backwards (character 5)".
Result<std::vector<std::string>> ExpandHostlist(const std::string& expr);

// A hosts file: one hostlist expression per line (several per line,
// comma-separated, also do), '#' starts a comment, blank lines are skipped.
// A regular file of at most 16 MiB. Errors read "FILE:LINE: what" (a host
// listed twice is one); an empty file is an error.
Result<std::vector<std::string>> ReadHostsFile(const std::string& path);

// The nodes of the Slurm allocation this process runs in: SLURM_JOB_NODELIST
// (salloc/sbatch set it), expanded. *expr gets the variable's text. NotFound
// when it is unset or empty; a bad expression reads
// "SLURM_JOB_NODELIST=EXPR: <ExpandHostlist's error>".
Result<std::vector<std::string>> SlurmJobNodes(std::string* expr);

}  // namespace fdrill
