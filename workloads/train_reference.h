// The training loop's answer computed without a network: the digest of the
// state after `steps` steps of TrainUpdate over the exact sum of every
// rank's gradient (DataPattern's all_reduce/sum/float64 inputs). No MPI, no
// checkpoint, no collective: a fault-free reference that a drill compares
// the job's final digest with (`fdrill-train-ref`).
#pragma once

#include <cstdint>

namespace fdrill {

// count: float64 elements (-b / 8). O(steps x count x nranks).
uint64_t TrainReferenceDigest(int nranks, uint64_t count, int64_t steps);

}  // namespace fdrill
