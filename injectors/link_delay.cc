// link_delay: adds a fixed delay (plus optional uniform jitter) to an
// interface's packets, optionally only those to (egress) or from (ingress)
// one peer.
//
// Two mechanisms; Capture picks one and journals it as "mode":
//  netem    on kernels that have sch_netem, for egress without a peer:
//           `tc qdisc replace dev IF root handle fd2: netem delay D J`. Like
//           link_rate it refuses a root qdisc that is not a kernel default,
//           and Revert deletes the root qdisc only while it is ours (fd2:).
//           Verify reads `tc -j qdisc show` (kind netem, handle fd2:, and
//           options.delay.delay, which tc prints in seconds).
//  nfqueue  everywhere else (the CI kernel has no netem; ingress or a peer
//           need a match netem alone lacks): a chain of the fault's own,
//           FDRILL-DELAY-<hash> (iptables_chain.h), holding
//           `[-d|-s PEER] -j NFQUEUE --queue-num Q --queue-bypass`, reached
//           from filter OUTPUT `-o IF` (egress) or filter INPUT `-i IF`
//           (ingress), and a delay line in THIS process
//           (nfqueue_delay_line.h) that holds each queued packet for the
//           delay, then accepts it. --queue-bypass makes the kernel accept
//           packets while no socket is bound to Q, so an agent that dies
//           leaves traffic undelayed, never blackholed.
//           Q = 64768 + (the chain name's hash mod 256): queues
//           64768-65023 (0xfd00-0xfdff) are reserved for fdrill. Capture
//           refuses a Q that is already bound.
//           Apply starts the line (binds Q) and then inserts the rule, so no
//           packet reaches Q before a reader is there. Verify checks the
//           rule and jump with `iptables -C` and that
//           /proc/net/netfilter/nfnetlink_queue (per network namespace;
//           columns: queue, peer portid, queued, copy mode, copy range,
//           dropped, user dropped, last id, 1) lists Q bound by our line's
//           netlink port id. Revert removes the rule first, then the line
//           accepts what it holds and unbinds; safe after a failed Apply
//           and twice. A restarted agent's journal sweep reverts the rule
//           alone: the line died with the old agent, and with it the binding.
// Delay lives in userspace: fine for control-plane and latency drills, not
// for shaping multi-Gb/s flows (fault-mechanisms §1.2).
#include <cmath>

#include "injectors/injector.h"
#include "injectors/iptables_chain.h"
#include "injectors/netdev.h"
#include "injectors/nfqueue_delay_line.h"
#include "injectors/param_values.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

constexpr char kHandle[] = "fd2:";
constexpr char kQueueFile[] = "/proc/net/netfilter/nfnetlink_queue";
constexpr uint16_t kFirstQueue = 0xfd00;  // fdrill's queues: 0xfd00-0xfdff

// Read-only: sch_netem is loaded, built in, or a module file tc can load.
bool NetemAvailable(SysFs* sysfs) {
  if (!sysfs) return false;
  if (sysfs->Exists("/sys/module/sch_netem")) return true;
  auto release = sysfs->Read("/proc/sys/kernel/osrelease");
  if (!release.ok()) return false;
  std::string rel = *release;
  while (!rel.empty() && (rel.back() == '\n' || rel.back() == ' ')) rel.pop_back();
  std::string dir = "/lib/modules/" + rel;
  for (const char* ext : {"", ".xz", ".zst", ".gz"}) {
    if (sysfs->Exists(dir + "/kernel/net/sched/sch_netem.ko" + ext)) return true;
  }
  auto builtin = sysfs->Read(dir + "/modules.builtin");
  return builtin.ok() && builtin->find("/sch_netem.ko") != std::string::npos;
}

struct Settings {
  std::string ifname;
  Duration delay{};
  Duration jitter{};
  bool egress = true;
  bool peer = false;
  uint16_t queue = 0;
};

class LinkDelay final : public Fault {
 public:
  LinkDelay(Host host, Settings s, ChainSpec spec, DelayLineMaker make_line)
      : host_(host),
        s_(std::move(s)),
        who_("link_delay " + s_.ifname),
        chain_(host.runner, std::move(spec), who_),
        make_line_(std::move(make_line)) {}

  Status Capture() override {
    NetOf net(host_);
    auto link = ReadLink(*net, s_.ifname);
    if (!link.ok()) return link.status().Annotate("link_delay");
    if (s_.egress && !s_.peer && NetemAvailable(host_.sysfs)) {
      auto kind = ReadDefaultRootQdisc(*net, s_.ifname, who_, "");
      if (!kind.ok()) return kind.status();
      prior_kind_ = *kind;
      mode_ = "netem";
      return Status::Ok();
    }
    if (auto s = chain_.Capture(); !s.ok()) return s;
    auto bound = QueuePort();
    if (!bound.ok()) return bound.status().Annotate(who_);
    if (bound->has_value()) {
      return FailedPrecondition(
          who_ + ": NFQUEUE " + std::to_string(s_.queue) + " (fdrill's range 64768-65023) " +
          "is already bound by netlink port " + std::to_string(**bound) +
          ": an identical fault is active, or another fault hashed to the same queue");
    }
    mode_ = "nfqueue";
    return Status::Ok();
  }

  Json Saved() const override {
    Json j = chain_.Saved();
    j["mode"] = mode_;
    j["queue"] = s_.queue;
    j["prior_kind"] = prior_kind_;
    return j;
  }
  Status Load(const Json& saved) override {
    mode_ = saved.value("mode", "");
    s_.queue = saved.value("queue", s_.queue);
    prior_kind_ = saved.value("prior_kind", "");
    chain_.Load(saved);
    return Status::Ok();
  }

  Status Apply() override {
    if (mode_ == "netem") {
      NetOf net(host_);
      Status s = net->Apply(Netem());
      return s.ok() ? s : s.Annotate(who_);
    }
    if (mode_ != "nfqueue") return FailedPrecondition(who_ + ": Apply before a successful Capture");
    if (!line_) {
      line_ = make_line_();
      if (auto s = line_->Start({s_.queue, s_.delay, s_.jitter}); !s.ok()) {
        line_.reset();
        return s.Annotate(who_);
      }
    }
    return chain_.Apply();
  }

  Status Verify() override {
    if (mode_ == "netem") {
      NetOf net(host_);
      auto q = ReadRootQdisc(*net, s_.ifname);
      if (!q.ok()) return q.status().Annotate(who_);
      double seconds = -1;
      if (q->options.contains("delay") && q->options["delay"].is_object()) {
        seconds = q->options["delay"].value("delay", -1.0);
      }
      double want = std::chrono::duration<double>(s_.delay).count();
      if (q->kind != "netem" || q->handle != kHandle ||
          std::abs(seconds - want) > want / 100 + 1e-5) {
        return FailedPrecondition(who_ + ": root qdisc is " + q->kind + " " + q->handle +
                                  " with delay " + std::to_string(seconds) + " s, expected netem " +
                                  kHandle + " with " + FormatDuration(s_.delay));
      }
      return Status::Ok();
    }
    if (auto s = chain_.Verify(); !s.ok()) return s;
    auto bound = QueuePort();
    if (!bound.ok()) return bound.status().Annotate(who_);
    std::string q = "NFQUEUE " + std::to_string(s_.queue);
    if (!bound->has_value()) {
      return FailedPrecondition(who_ + ": " + q + " has no reader (" + kQueueFile +
                                "); packets pass undelayed through --queue-bypass");
    }
    auto ours = line_ ? line_->PortId() : std::nullopt;
    if (!ours || **bound != *ours) {
      return FailedPrecondition(
          who_ + ": " + q + " is bound by netlink port " + std::to_string(**bound) +
          ", not by this agent's delay line" +
          (ours ? " (port " + std::to_string(*ours) + ")" : " (none runs here)"));
    }
    return Status::Ok();
  }

  Status Revert() override {
    if (mode_ == "netem") {
      NetOf net(host_);
      return DeleteOwnRootQdisc(*net, s_.ifname, kHandle, who_);
    }
    if (mode_ != "nfqueue") return Status::Ok();  // Capture failed: nothing was applied
    // Rule first: while it stands, stopping the line would let packets
    // bypass undelayed (a different fault); keep both for the retry.
    if (auto s = chain_.Revert(); !s.ok()) return s;
    if (line_) {
      line_->Stop();
      line_.reset();
    }
    return Status::Ok();
  }

  Status VerifyReverted() override {
    if (mode_ == "netem") {
      NetOf net(host_);
      return ExpectPriorRootQdisc(*net, s_.ifname, kHandle, prior_kind_, who_);
    }
    if (mode_ != "nfqueue") return Status::Ok();
    if (auto s = chain_.VerifyReverted(); !s.ok()) return s;
    auto bound = QueuePort();
    if (!bound.ok()) return bound.status().Annotate(who_);
    if (bound->has_value()) {
      return FailedPrecondition(who_ + ": NFQUEUE " + std::to_string(s_.queue) +
                                " is still bound by netlink port " + std::to_string(**bound));
    }
    return Status::Ok();
  }

  std::string Target() const override { return s_.ifname; }

  std::vector<std::string> Mechanism() const override {
    std::vector<std::string> out;
    bool netem_possible = s_.egress && !s_.peer;
    if (mode_ != "nfqueue" && netem_possible) {
      std::string prefix = mode_.empty() ? "with sch_netem: " : "";
      out.push_back(prefix + "apply: " + JoinArgv(Netem().Argv()));
      out.push_back(prefix + "revert: tc qdisc del dev " + s_.ifname + " root");
    }
    if (mode_ != "netem") {
      std::string prefix = mode_.empty() && netem_possible ? "without sch_netem: " : "";
      out.push_back(prefix + "apply: delay line on NFQUEUE " + std::to_string(s_.queue) +
                    " in the agent (" + FormatDuration(s_.delay) + " +- " +
                    FormatDuration(s_.jitter) + ")");
      for (auto& line : chain_.Mechanism()) out.push_back(prefix + line);
      out.push_back(prefix + "revert: accept held packets, unbind NFQUEUE " +
                    std::to_string(s_.queue));
    }
    return out;
  }

 private:
  NetChange Netem() const { return NetChange::Netem(s_.ifname, kHandle, s_.delay, s_.jitter); }

  // The netlink port bound to our queue, nullopt when none is; a missing
  // file means nfnetlink_queue is not loaded, so nothing is bound.
  Result<std::optional<uint32_t>> QueuePort() {
    if (!host_.sysfs)
      return FailedPrecondition(std::string("cannot read ") + kQueueFile + " (no sysfs)");
    auto text = host_.sysfs->Read(kQueueFile);
    if (!text.ok()) {
      if (text.status().code() == StatusCode::kNotFound) return std::optional<uint32_t>();
      return text.status();
    }
    size_t start = 0;
    while (start < text->size()) {
      size_t nl = text->find('\n', start);
      std::string line =
          text->substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      start = nl == std::string::npos ? text->size() : nl + 1;
      unsigned long queue = 0, port = 0;
      if (std::sscanf(line.c_str(), "%lu %lu", &queue, &port) == 2 && queue == s_.queue) {
        return std::optional<uint32_t>(static_cast<uint32_t>(port));
      }
    }
    return std::optional<uint32_t>();
  }

  Host host_;
  Settings s_;
  std::string who_;
  IptablesChain chain_;
  DelayLineMaker make_line_;
  std::unique_ptr<DelayLine> line_;
  std::string mode_;  // "", "netem", "nfqueue"
  std::string prior_kind_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeLinkDelayWith(const Json& params, Host host,
                                                 DelayLineMaker make_line) {
  ParamReader p(params);
  auto ifname = p.String("interface");
  if (!ifname.ok()) return ifname.status();
  auto delay = p.Dur("delay", {std::chrono::microseconds(1), std::chrono::seconds(10)});
  if (!delay.ok()) return delay.status();
  auto jitter = p.Dur("jitter", Duration(0), {Duration(0), std::chrono::seconds(10)});
  if (!jitter.ok()) return jitter.status();
  if (*jitter > *delay) {
    return InvalidArgument("params.jitter: must be between 0 and the delay (" +
                           FormatDuration(*delay) + "), not " + FormatDuration(*jitter));
  }
  auto match = ReadPeerDirection(p, params);
  if (!match.ok()) return match.status();
  if (auto s = p.Finish(); !s.ok()) return s;

  Settings s;
  s.ifname = *ifname;
  s.delay = *delay;
  s.jitter = *jitter;
  s.egress = match->egress;
  s.peer = match->peer.has_value();
  ChainSpec spec;
  spec.table = "filter";
  spec.name = FaultChainName("DELAY", "link_delay", params);
  spec.comment = "fdrill:link_delay";
  spec.hooks = {{s.egress ? "OUTPUT" : "INPUT", s.egress ? "-o" : "-i", *ifname}};
  // The queue comes from the chain name's hash, so a journal replay (and
  // `fdrill plan`) names the same queue.
  s.queue = static_cast<uint16_t>(
      kFirstQueue + (std::stoul(spec.name.substr(spec.name.size() - 8), nullptr, 16) & 0xff));
  Argv rule = match->PeerMatch();
  for (const char* a : {"-j", "NFQUEUE", "--queue-num"}) rule.push_back(a);
  rule.push_back(std::to_string(s.queue));
  rule.push_back("--queue-bypass");
  spec.rules = {rule};
  return std::unique_ptr<Fault>(
      std::make_unique<LinkDelay>(host, std::move(s), std::move(spec), std::move(make_line)));
}

Result<std::unique_ptr<Fault>> MakeLinkDelay(const Json& params, Host host) {
  return MakeLinkDelayWith(params, host, &MakeNfqueueDelayLine);
}

Status ProbeLinkDelay(const Json& params, Host host) {
  bool ingress = params.is_object() && params.value("direction", Json("egress")) == Json("ingress");
  bool peer = params.is_object() && params.contains("peer");
  if (NetemAvailable(host.sysfs) && !ingress && !peer) {
    if (host.net != nullptr) return ProbeInterface(host, params, "link_delay");  // no tc needed
    auto r = host.runner->Run({"tc", "-V"}, std::chrono::seconds(5));
    if (!r.ok() && IsProgramMissing(r.status())) {
      return Unsupported("link_delay needs tc (iproute2) for netem: " + r.status().message());
    }
    if (!r.ok()) return r.status().Annotate("link_delay");
    if (r->exit_code != 0)
      return Unsupported("link_delay: `tc -V` exited " + std::to_string(r->exit_code));
  } else if (auto s = ProbeIptables(*host.runner, "link_delay"); !s.ok()) {
    return s;
  }
  return ProbeInterface(host, params, "link_delay");
}

}  // namespace fdrill
