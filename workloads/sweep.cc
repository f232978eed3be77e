#include "workloads/sweep.h"

#include <string>

namespace fdrill {

Result<std::vector<uint64_t>> SweepSizes(const SweepFlags& f) {
  if (f.min_bytes == 0) return InvalidArgument("-b/--minbytes must be a positive size, not 0");
  if (f.max_bytes < f.min_bytes) {
    return InvalidArgument("-e/--maxbytes " + std::to_string(f.max_bytes) +
                           " is less than -b/--minbytes " + std::to_string(f.min_bytes) +
                           ": the sweep runs from -b up to -e");
  }
  if (f.factor == 0)
    return InvalidArgument("-f/--stepfactor must be at least 1 (1: add -i/--stepbytes)");
  if (f.factor == 1 && f.step_bytes == 0 && f.max_bytes > f.min_bytes) {
    return InvalidArgument(
        "-i/--stepbytes must be positive when -f/--stepfactor is 1 and -e/--maxbytes exceeds -b");
  }
  std::vector<uint64_t> sizes;
  for (uint64_t size = f.min_bytes;;) {
    if (sizes.size() == kMaxSweepSizes) {
      return InvalidArgument("the sweep -b " + std::to_string(f.min_bytes) + " -e " +
                             std::to_string(f.max_bytes) + " has more than " +
                             std::to_string(kMaxSweepSizes) +
                             " sizes: raise -f/--stepfactor or -i/--stepbytes");
    }
    sizes.push_back(size);
    // The next size, unless it would pass max (checked without overflow).
    if (f.factor > 1) {
      if (size > f.max_bytes / f.factor) break;
      size *= f.factor;
    } else {
      if (f.step_bytes == 0 || f.step_bytes > f.max_bytes - size) break;
      size += f.step_bytes;
    }
  }
  return sizes;
}

}  // namespace fdrill
