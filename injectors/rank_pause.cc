// rank_pause: stops workload ranks with SIGSTOP and resumes them with
// SIGCONT — a hung rank, or with `on`/`period` a straggler that is stopped
// for `on` of every `period`.
//
// Mechanism: kill(pid, SIGSTOP) / kill(pid, SIGCONT) on the ranks FindRanks
// selects (ranks.h: only fdrill-collective processes of this node). A
// stopped process shows state T in /proc/PID/stat, which is what Verify
// reads. Capture selects the ranks and saves (pid, start time) of each, so a
// journal sweep by a restarted agent resumes exactly those processes and
// never a pid that was reused. Revert sends SIGCONT to each still-same
// process: harmless on a running one, so safe twice and after a partial
// Apply. Open MPI over TCP stalls for the stop and resumes after SIGCONT
// (reference §1.11); NCCL peers would hang in their kernels meanwhile.
// A stop is visible to the parent (orted) through SIGCHLD; Open MPI 4.1
// ignores it.
#include <signal.h>

#include <chrono>
#include <optional>
#include <thread>

#include "injectors/injector.h"
#include "injectors/params.h"
#include "injectors/ranks.h"

namespace fdrill {

namespace {

class RankPause final : public RankFault {
 public:
  RankPause(Host host, std::optional<int> rank, std::optional<Duration> on,
            std::optional<Duration> period)
      : RankFault(host, rank, "rank_pause"), on_(on), period_(period) {}

  Status Apply() override { return SetPaused(true); }

  Status Tick(Duration since_apply) override {
    if (!on_ || !period_) return Status::Ok();
    const bool want = since_apply % *period_ < *on_;
    return want == paused_ ? Status::Ok() : SetPaused(want);
  }

  // The next stop or resume of a straggler: the end of this period's `on`
  // window, or the start of the next period.
  std::optional<Duration> NextChange(Duration since_apply) const override {
    if (!on_ || !period_) return std::nullopt;
    const Duration start = since_apply - since_apply % *period_;
    return since_apply % *period_ < *on_ ? start + *on_ : start + *period_;
  }

  // A stop takes effect asynchronously (a rank inside a system call stops
  // on its way out), so Verify looks again for up to 1 s before it says no.
  Status Verify() override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (;;) {
      Status s = Observe();
      if (s.ok() || std::chrono::steady_clock::now() >= deadline) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  Status Observe() {
    for (const RankProc& r : ranks_) {
      auto info = host_.procs->Inspect(r.pid);
      if (!info.ok() || info->start_ticks != r.start_ticks) {
        return FailedPrecondition("rank_pause: rank " + std::to_string(r.rank) + " (pid " +
                                  std::to_string(r.pid) + ") is gone");
      }
      const bool stopped = info->state == 'T';
      if (stopped != paused_) {
        return FailedPrecondition("rank_pause: pid " + std::to_string(r.pid) + " is in state " +
                                  std::string(1, info->state) + ", expected " +
                                  (paused_ ? "T (stopped)" : "running"));
      }
    }
    return Status::Ok();
  }

  Status Revert() override {
    Status first = Status::Ok();
    for (const RankProc& r : ranks_) {
      Status s = SignalIfSame(*host_.procs, r.pid, r.start_ticks, SIGCONT);
      if (!s.ok() && first.ok())
        first = s.Annotate("rank_pause: SIGCONT pid " + std::to_string(r.pid));
    }
    if (first.ok()) paused_ = false;
    return first;
  }

  Status VerifyReverted() override {
    for (const RankProc& r : ranks_) {
      auto info = host_.procs->Inspect(r.pid);
      if (info.ok() && info->start_ticks == r.start_ticks && info->state == 'T') {
        return FailedPrecondition("rank_pause: pid " + std::to_string(r.pid) + " is still stopped");
      }
    }
    return Status::Ok();
  }

  std::vector<std::string> Mechanism() const override {
    std::string what = DescribeRanks(rank_) + " (" + kWorkloadExe +
                       " or a job's rank in this node's network namespace)";
    if (on_ && period_) {
      return {"apply: kill -STOP / kill -CONT " + what + ", stopped " + FormatDuration(*on_) +
                  " of every " + FormatDuration(*period_),
              "revert: kill -CONT " + what};
    }
    return {"apply: kill -STOP " + what, "revert: kill -CONT " + what};
  }

 private:
  Status SetPaused(bool paused) {
    const int sig = paused ? SIGSTOP : SIGCONT;
    for (const RankProc& r : ranks_) {
      if (Status s = SignalIfSame(*host_.procs, r.pid, r.start_ticks, sig); !s.ok()) {
        return s.Annotate("rank_pause: " + std::string(paused ? "SIGSTOP" : "SIGCONT") + " pid " +
                          std::to_string(r.pid));
      }
    }
    paused_ = paused;
    return Status::Ok();
  }

  std::optional<Duration> on_;
  std::optional<Duration> period_;
  bool paused_ = false;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeRankPause(const Json& params, Host host) {
  ParamReader p(params);
  auto rank = ReadRankParam(p);
  if (!rank.ok()) return rank.status();
  std::optional<Duration> on, period;
  auto o = p.Dur("on", Duration::zero());
  if (!o.ok()) return o.status();
  auto per = p.Dur("period", Duration::zero());
  if (!per.ok()) return per.status();
  if (params.contains("on") != params.contains("period")) {
    return InvalidArgument(
        std::string(params.contains("on") ? "params.period" : "params.on") +
        ": a straggler needs both on and period (stopped `on` of every `period`)");
  }
  if (params.contains("on")) {
    if (*o <= Duration::zero() || *o >= *per) {
      return InvalidArgument("params.on: must be more than 0 and less than params.period (" +
                             FormatDuration(*per) +
                             "); leave both out to pause for the whole window");
    }
    on = *o;
    period = *per;
  }
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::unique_ptr<Fault>(std::make_unique<RankPause>(host, *rank, on, period));
}

Status ProbeRanks(const Json&, Host host) { return CheckRankAccess(host); }

}  // namespace fdrill
