// link_rate: caps an interface's egress with a token-bucket root qdisc.
//
// Mechanism: `tc qdisc replace dev IF root handle fd1: tbf rate R burst B
// latency L`. The handle fd1: marks the qdisc as fdrill's. Apply refuses an
// interface whose root qdisc is not one the kernel attached by itself
// (noqueue, pfifo_fast, mq, fq_codel): deleting our qdisc brings exactly that
// default back, and we will not replace a qdisc we cannot restore.
// Verify reads `tc -j qdisc show` and checks kind tbf, handle fd1: and the
// rate (tc reports bytes/s). Revert deletes the root qdisc only while it is
// still ours, so it is safe after a failed Apply and safe twice.
// Burst: veth and GSO hand tbf super-packets of up to 64 KiB, and a packet
// larger than the burst is dropped, so burst defaults to max(128 KiB, 10 ms
// of rate).
#include <algorithm>

#include "injectors/injector.h"
#include "injectors/netdev.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

constexpr char kHandle[] = "fd1:";

class LinkRate final : public Fault {
 public:
  LinkRate(Host host, std::string ifname, uint64_t rate, uint64_t burst, Duration latency)
      : host_(host), ifname_(std::move(ifname)), rate_(rate), burst_(burst), latency_(latency) {}

  Status Capture() override {
    auto q = ReadRootQdisc(*host_.runner, ifname_);
    if (!q.ok()) return q.status().Annotate("link_rate " + ifname_);
    if (!IsDefaultQdisc(q->kind)) {
      return FailedPrecondition("link_rate " + ifname_ + ": root qdisc is " + q->kind + " (handle " + q->handle +
                                "), not a kernel default; fdrill will not replace a qdisc it cannot restore. "
                                "Remove it, or run `fdrill-agent --revert-all` if a drill left it");
    }
    prior_kind_ = q->kind;
    return Status::Ok();
  }

  Json Saved() const override { return {{"prior_kind", prior_kind_}}; }
  Status Load(const Json& saved) override {
    prior_kind_ = saved.value("prior_kind", "");
    return Status::Ok();
  }

  Status Apply() override {
    auto r = RunChecked(*host_.runner, ApplyArgv());
    return r.ok() ? Status::Ok() : r.status().Annotate("link_rate " + ifname_);
  }

  Status Verify() override {
    auto q = ReadRootQdisc(*host_.runner, ifname_);
    if (!q.ok()) return q.status();
    uint64_t bytes_per_sec = q->options.value("rate", uint64_t{0});
    if (q->kind != "tbf" || q->handle != kHandle || bytes_per_sec * 8 != rate_) {
      return FailedPrecondition("link_rate " + ifname_ + ": root qdisc is " + q->kind + " " + q->handle + " at " +
                                std::to_string(bytes_per_sec * 8) + " bit/s, expected tbf " + kHandle + " at " +
                                std::to_string(rate_) + " bit/s");
    }
    return Status::Ok();
  }

  Status Revert() override {
    auto q = ReadRootQdisc(*host_.runner, ifname_);
    if (!q.ok()) {
      // The interface is gone: nothing of ours can remain on it.
      return q.status().code() == StatusCode::kNotFound ? Status::Ok() : q.status();
    }
    if (q->handle != kHandle) return Status::Ok();  // never applied, or already reverted
    auto r = RunChecked(*host_.runner, RevertArgv());
    return r.ok() ? Status::Ok() : r.status().Annotate("link_rate " + ifname_);
  }

  Status VerifyReverted() override {
    auto q = ReadRootQdisc(*host_.runner, ifname_);
    if (!q.ok()) return q.status();
    if (q->handle == kHandle || (!prior_kind_.empty() && q->kind != prior_kind_)) {
      return FailedPrecondition("link_rate " + ifname_ + ": root qdisc is " + q->kind + " " + q->handle +
                                ", expected the prior " + prior_kind_);
    }
    return Status::Ok();
  }

  std::string Target() const override { return ifname_; }
  std::vector<std::string> Mechanism() const override {
    return {"apply: " + JoinArgv(ApplyArgv()), "revert: " + JoinArgv(RevertArgv())};
  }

 private:
  std::vector<std::string> ApplyArgv() const {
    return {"tc",    "qdisc", "replace", "dev",   ifname_, "root", "handle", kHandle, "tbf", "rate",
            std::to_string(rate_) + "bit", "burst", std::to_string(burst_), "latency",
            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(latency_).count()) + "ms"};
  }
  std::vector<std::string> RevertArgv() const { return {"tc", "qdisc", "del", "dev", ifname_, "root"}; }

  Host host_;
  std::string ifname_;
  uint64_t rate_;
  uint64_t burst_;
  Duration latency_;
  std::string prior_kind_;
};

Result<std::unique_ptr<LinkRate>> Build(const Json& params, Host host) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  auto rate = p.Rate("rate");
  if (!rate.ok()) return rate.status();
  uint64_t default_burst = std::max<uint64_t>(128 * 1024, *rate / 8 / 100);
  auto burst = p.Size("burst", default_burst);
  if (!burst.ok()) return burst.status();
  if (*burst < 2048) return InvalidArgument("params.burst: must be at least 2K (one MTU-sized packet)");
  auto latency = p.Dur("latency", std::chrono::milliseconds(50));
  if (!latency.ok()) return latency.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  return std::make_unique<LinkRate>(host, *ifname, *rate, *burst, *latency);
}

}  // namespace

Result<std::unique_ptr<Fault>> MakeLinkRate(const Json& params, Host host) {
  auto f = Build(params, host);
  if (!f.ok()) return f.status();
  return std::unique_ptr<Fault>(std::move(*f));
}

}  // namespace fdrill
