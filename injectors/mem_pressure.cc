// mem_pressure: allocates `size` bytes and touches every page, holding them
// resident while applied — memory pressure on the node (reference §1.13).
// Runs fdrill-burn (burn_process.h: dies with the agent, own cgroup).
// Apply returns once the process's VmRSS reaches 90 % of size (Verify reads
// the same), so the fault is in force when the drill says it is.
#include <sys/sysinfo.h>

#include "injectors/burn_process.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

class MemPressure final : public BurnFault {
 public:
  // Touching pages runs at a few GB/s; swap or reclaim can slow it a lot,
  // hence the load timeout.
  MemPressure(Host host, uint64_t bytes)
      : BurnFault(host,
                  BurnSpec{"mem_pressure",
                           "memory",
                           {"mem", std::to_string(bytes)},
                           std::chrono::seconds(10) + std::chrono::milliseconds(bytes >> 20)}),
        bytes_(bytes) {}

 protected:
  Status Loaded(const ProcInfo& info) const override {
    const uint64_t want_kib = bytes_ / 1024 * 9 / 10;
    if (info.rss_kib >= want_kib) return Status::Ok();
    return FailedPrecondition("mem_pressure: " + std::to_string(info.rss_kib) +
                              " KiB resident, want at least " + std::to_string(want_kib) + " KiB");
  }

 private:
  uint64_t bytes_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeMemPressure(const Json& params, Host host) {
  ParamReader p(params);
  auto bytes = p.Size("size", 0, {uint64_t{1} << 20, kSizes.hi});
  if (!bytes.ok()) return bytes.status();
  if (*bytes == 0) return InvalidArgument("params.size: required (at least 1M, e.g. size: 2G)");
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<MemPressure>(host, *bytes));
}

// Refuses a size above the node's RAM before anything starts.
Status ProbeMemPressure(const Json& params, Host) {
  if (!params.contains("size")) return Status::Ok();
  ParamReader p(params);
  auto bytes = p.Size("size", 0);
  if (!bytes.ok()) return bytes.status();
  struct sysinfo si {};
  if (sysinfo(&si) != 0) return Status::Ok();
  const uint64_t total = static_cast<uint64_t>(si.totalram) * si.mem_unit;
  if (*bytes > total) {
    return FailedPrecondition("params.size: " + std::to_string(*bytes) +
                              " bytes is more than this node's " + std::to_string(total) +
                              " bytes of RAM");
  }
  return Status::Ok();
}

}  // namespace fdrill
