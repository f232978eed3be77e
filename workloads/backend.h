// Backend: one library that runs the collective (MPI, NCCL). A backend owns
// its send and receive buffers (host or device memory), allocated once for
// the largest size of the run; SetLayout picks the current size. The runner
// hands it the input and reads the result back through host spans, untimed,
// and times only Run(). Each backend lives in one adapter file, the only
// file that includes its library's headers, and maps Op/DType/RedOp there.
//
// Construction (the factories in backends.h) is collective and returns a
// backend ready to run: peers joined, buffers allocated. Run() and Close()
// are collective too. A Run() that fails leaves the backend unusable; the
// caller then ends the job (the peers may be stuck in the collective).
// Not thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/core/status.h"
#include "common/core/units.h"
#include "workloads/collective.h"
#include "workloads/libraries.h"

namespace fdrill {

// What every rank will run, identical on all ranks.
struct BackendOptions {
  Op op = Op::kAllReduce;
  DType dtype = DType::kFloat32;
  RedOp redop = RedOp::kSum;
  int root = 0;
  uint64_t max_send_bytes = 0;  // the largest Layout of the run (plan.h)
  uint64_t max_recv_bytes = 0;
  Duration timeout = std::chrono::seconds(60);
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Local, untimed: the buffer lengths of the following calls, at most the
  // maxima of BackendOptions.
  virtual Status SetLayout(const Layout& layout) = 0;
  // Copies `input` (send_count elements) into the send buffer.
  virtual Status SetInput(std::span<const std::byte> input) = 0;
  // Runs the collective and returns once this rank's result is complete.
  virtual Status Run() = 0;
  // Copies the receive buffer (recv_count elements) into `output`.
  virtual Status GetOutput(std::span<std::byte> output) = 0;
  // Host-memory backends (MPI): the send buffer itself (send_count
  // elements) and the receive buffer (recv_count), so the runner fills and
  // checks in place instead of copying; empty spans when the buffers are not
  // host memory (NCCL), and then SetInput/GetOutput copy. Valid until the
  // next SetLayout.
  virtual std::span<std::byte> HostInput() { return {}; }
  virtual std::span<std::byte> HostOutput() { return {}; }
  // Orderly teardown; after it only destruction is allowed.
  virtual Status Close() = 0;
  // The libraries beyond MPI this backend runs on, as loaded in this
  // process (libraries.h): NCCL and the CUDA runtime; none for MPI.
  virtual std::vector<LoadedLibrary> Libraries() const { return {}; }
};

// What every backend does of the runner's calls: SetLayout takes LAYOUT as
// *CURRENT when it fits the buffers OPTIONS sized (its maxima, in bytes);
// SetInput's input must be the layout's send_count elements.
inline Status SetLayoutWithin(const Layout& layout, const BackendOptions& options,
                              Layout* current) {
  const size_t element = DTypeSize(options.dtype);
  if (layout.send_count * element > options.max_send_bytes ||
      layout.recv_count * element > options.max_recv_bytes) {
    return Internal("SetLayout: larger than the buffers allocated");
  }
  *current = layout;
  return Status::Ok();
}
inline Status CheckInputSize(std::span<const std::byte> input, const Layout& layout, DType dtype) {
  if (input.size() != layout.send_count * DTypeSize(dtype)) return Internal("SetInput: wrong size");
  return Status::Ok();
}

}  // namespace fdrill
