// cpu_hog: N threads that spin on the node's CPUs while applied — host CPU
// contention for the ranks and their progress threads (reference §1.13).
// Runs fdrill-burn (burn_process.h: dies with the agent, own cgroup).
// Verify observes the process running (and in its cgroup).
#include "injectors/burn_process.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

class CpuHog final : public BurnFault {
 public:
  CpuHog(Host host, int threads) : BurnFault(host), threads_(threads) {}
  std::string Target() const override { return "cpu"; }
  std::string ResolvedTarget() const override { return "node"; }  // its CPUs, all of them

 protected:
  std::vector<std::string> BurnArgs() const override { return {"cpu", std::to_string(threads_)}; }
  Status Loaded(const ProcInfo&) const override { return Status::Ok(); }
  Duration LoadTimeout() const override { return std::chrono::seconds(1); }
  std::string Kind() const override { return "cpu_hog"; }

 private:
  int threads_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeCpuHog(const Json& params, Host host) {
  ParamReader p(params);
  auto threads = p.Int("threads", 1, 1, 1024);
  if (!threads.ok()) return threads.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<CpuHog>(host, static_cast<int>(*threads)));
}

}  // namespace fdrill
