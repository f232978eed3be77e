// rank_kill: ends workload ranks with a signal (default SIGKILL) — a crashed
// rank. Nothing can bring a killed process back: Revert has nothing to
// restore, and recovering the job is the workload's restart policy's work
// (fdrill-collective --train resumes from its checkpoint). Open MPI 4.1
// aborts the whole job about 3 s after a rank dies on a signal (reference
// §1.12).
//
// Mechanism: kill(pid, sig) on the ranks FindRanks selects (ranks.h: only
// fdrill-collective processes of this node), each named by (pid, start time)
// so a reused pid is never signalled. Verify observes that each is gone or a
// zombie (waiting up to 2 s: delivery and exit are asynchronous).
#include <signal.h>

#include <chrono>
#include <optional>
#include <thread>

#include "injectors/injector.h"
#include "injectors/params.h"
#include "injectors/ranks.h"

namespace fdrill {

namespace {

struct SignalName {
  const char* name;
  int number;
};
constexpr SignalName kSignals[] = {{"KILL", SIGKILL}, {"TERM", SIGTERM}, {"INT", SIGINT},
                                   {"SEGV", SIGSEGV}, {"ABRT", SIGABRT}, {"BUS", SIGBUS}};

class RankKill final : public RankFault {
 public:
  RankKill(Host host, std::optional<int> rank, SignalName sig)
      : RankFault(host, rank, "rank_kill"), sig_(sig) {}

  Status Apply() override {
    for (const RankProc& r : ranks_) {
      if (Status s = SignalIfSame(*host_.procs, r.pid, r.start_ticks, sig_.number); !s.ok()) {
        return s.Annotate("rank_kill: SIG" + std::string(sig_.name) + " pid " +
                          std::to_string(r.pid));
      }
    }
    return Status::Ok();
  }

  Status Verify() override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (;;) {
      int alive = -1;
      for (const RankProc& r : ranks_) {
        auto info = host_.procs->Inspect(r.pid);
        if (info.ok() && info->start_ticks == r.start_ticks && info->state != 'Z' &&
            info->state != 'X') {
          alive = r.pid;
          break;
        }
      }
      if (alive < 0) return Status::Ok();
      if (std::chrono::steady_clock::now() >= deadline) {
        return FailedPrecondition("rank_kill: pid " + std::to_string(alive) +
                                  " still runs 2 s after SIG" + sig_.name +
                                  " (it handles or ignores the signal?)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // A killed process cannot be restored; nothing else was changed.
  Status Revert() override { return Status::Ok(); }
  Status VerifyReverted() override { return Status::Ok(); }

  std::vector<std::string> Mechanism() const override {
    return {"apply: kill -" + std::string(sig_.name) + " " + DescribeRanks(rank_) + " (" +
                kWorkloadExe + " or a job's rank in this node's network namespace)",
            "revert: none (a killed rank is recovered by the workload's restart, not by fdrill)"};
  }

 private:
  SignalName sig_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeRankKill(const Json& params, Host host) {
  ParamReader p(params);
  auto rank = ReadRankParam(p);
  if (!rank.ok()) return rank.status();
  auto name = p.String("signal", "KILL");
  if (!name.ok()) return name.status();
  std::string upper = *name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper.rfind("SIG", 0) == 0) upper = upper.substr(3);
  const SignalName* sig = nullptr;
  std::string known;
  for (const SignalName& s : kSignals) {
    if (upper == s.name) sig = &s;
    known += (known.empty() ? "" : ", ") + std::string(s.name);
  }
  if (sig == nullptr)
    return InvalidArgument("params.signal: \"" + *name + "\" is not one of " + known);
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<RankKill>(host, *rank, *sig));
}

}  // namespace fdrill
