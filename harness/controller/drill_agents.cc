#include "harness/controller/drill_agents.h"

#include <algorithm>

#include "common/tls/certs.h"
#include "common/tls/tls_config.h"
#include "common/wire/protocol.h"
#include "harness/controller/connect_all.h"
#include "harness/controller/drill.h"
#include "harness/controller/lease_limits.h"

namespace fdrill {

Json DrillAgents::LeaseBody(size_t i, int64_t ttl_ms) const {
  Json body = {{proto::key::kTtlMs, ttl_ms}, {proto::key::kDrill, drill_}};
  if (ttl_ms > 0) body[proto::key::kLimits] = limits_[i];
  return body;
}

Json DrillAgents::RenewalBody(size_t i, int64_t ttl_ms, uint64_t renewal) const {
  Json body = LeaseBody(i, ttl_ms);
  body[proto::key::kAck] = proto::key::kAckPush;
  body[proto::key::kRenewal] = renewal;
  body[proto::key::kAckWithinMs] =
      std::chrono::duration_cast<std::chrono::milliseconds>(s_.lease_renew).count();
  return body;
}

Status DrillAgents::Connect(const DrillOptions& opt, const std::string& drill, PushFn on_push,
                            LostFn on_lost) {
  on_lost_ = std::move(on_lost);
  drill_ = drill;
  // The emulated fabric's own pki, or (a real cluster) --tls-dir / /etc/fdrill/pki.
  auto tls = ControllerTls(
      opt.tls_dir.empty() && !s_.Emulated() && !opt.insecure ? kDefaultPkiDir : opt.tls_dir,
      opt.insecure, targets_.pki_dir);
  if (!tls.ok()) return tls.status();
  const std::vector<std::string> switches = s_.SwitchTargets();
  node_count_ = static_cast<size_t>(s_.nodes);
  if (targets_.nodes.size() < node_count_) {
    return FailedPrecondition(s_.file + ": the drill has " + std::to_string(node_count_) +
                              " nodes and only " + std::to_string(targets_.nodes.size()) +
                              " were resolved to agents");
  }
  work_ =
      std::make_unique<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>(
          io_.get_executor());
  io_thread_ = std::thread([this] { io_.run(); });
  // Sized once: the links' callbacks hold references into it.
  nodes_.resize(node_count_ + switches.size());
  renewals_ = std::make_shared<LeaseRenewals>(nodes_.size(), clock_.Now());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeLink& n = nodes_[i];
    const DrillTarget* t = i < node_count_ ? &targets_.nodes[i] : nullptr;
    if (i >= node_count_) {
      // A switch of the emulated fabric: its agent on the management network.
      const std::string& name = switches[i - node_count_];
      t = targets_.FindSwitch(name);
      if (t == nullptr || !t->has_agent) {
        return FailedPrecondition(
            s_.file + ": a fault names switch " + name + ", and the fabric up " +
            (t == nullptr ? std::string("has no such switch")
                          : "runs no agent on it (it was built by an older fdrill)") +
            "; run `fdrill fabric down && fdrill fabric up " + s_.emulated.UpFlags() + "`");
      }
    }
    // An emulated node's agent on its management address; a real node's on
    // the host's own name (DNS or /etc/hosts), at fabric.agent_port.
    n.name = t->name;
    n.address = t->host;
    n.port = t->port;
    n.tmpdir = t->tmpdir;
    n.link = std::make_unique<AgentLink>(io_, n.name, n.address, n.port,
                                         tls->has_value() ? &**tls : nullptr);
    // A counters or lease_ack push may acknowledge one of this drill's
    // renewals (LeaseLoop); pushes go to every session an agent has.
    n.link->set_on_push([on_push, &n, i, renewals = renewals_, drill = drill_](const Json& m) {
      if (auto ack = LeaseRenewals::AckIn(m, drill)) renewals->Acked(i, *ack);
      on_push(n, m);
    });
    n.link->set_on_drop([this, &n](const std::string& why) {
      if (closing_) return;
      on_lost_(n.name, "lost the agent: " + why);
    });
  }
  // Dial, hello and lease fan out to every agent at once: a slow or dead
  // agent costs its own timeout, not everyone's (connect_all.h).
  std::vector<AgentLink*> links;
  for (auto& n : nodes_) links.push_back(n.link.get());
  if (auto st = FirstFailure(ConnectAll(links, opt.connect_timeout)); !st.ok()) return st;
  if (auto st = HelloAll(); !st.ok()) return st;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i].link->set_drill(drill_);
    limits_.push_back(LeaseLimitsFor(s_, nodes_[i].name));
  }
  const int64_t ttl_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(s_.lease_ttl).count();
  std::vector<Json> bodies;
  for (size_t i = 0; i < nodes_.size(); ++i) bodies.push_back(LeaseBody(i, ttl_ms));
  if (auto st = FirstFailure(CallEachWith(proto::kLease, bodies, kCallTimeout)); !st.ok())
    return st;
  lease_thread_ = std::thread([this] { LeaseLoop(); });
  return Status::Ok();
}

Status DrillAgents::HelloAll() {
  // Each agent's clock offset from its hello: its wall clock against the
  // midpoint of this request's send and its reply's arrival.
  std::vector<int64_t> sent(nodes_.size()), answered(nodes_.size());
  std::vector<NodeLink*> to;
  for (auto& n : nodes_) to.push_back(&n);
  auto replies = CallAll(to, proto::kHello, std::vector<Json>(nodes_.size(), Json::object()),
                         kCallTimeout, &sent, &answered);
  std::vector<Status> checked;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeLink& n = nodes_[i];
    if (!replies[i].ok()) {
      checked.push_back(replies[i].status());
      continue;
    }
    const Json& hello = *replies[i];
    if (hello.value(proto::key::kNode, "") != n.name) {
      checked.push_back(FailedPrecondition("agent at " + n.link->address() + " says it is " +
                                           hello.value(proto::key::kNode, "") + ", expected " +
                                           n.name));
      continue;
    }
    n.offset_ns = hello[proto::key::kWallNs].get<int64_t>() - (sent[i] + answered[i]) / 2;
    n.tmpdir = hello.value(proto::key::kTmpdir, n.tmpdir);
    n.hostname = hello.value(proto::key::kHostname, n.name);
    checked.push_back(Status::Ok());
  }
  return FirstFailure(checked);
}

Status DrillAgents::FirstFailure(const std::vector<Status>& each) const {
  std::vector<size_t> failed;
  for (size_t i = 0; i < each.size(); ++i) {
    if (!each[i].ok()) failed.push_back(i);
  }
  if (failed.empty()) return Status::Ok();
  Status first = each[failed[0]];
  if (failed.size() == 1) return first;
  // The first in node order in full, then who else (a few names: at 10,000
  // nodes a whole rack may be down).
  std::string others;
  for (size_t k = 1; k < failed.size() && k <= 5; ++k)
    others += (k > 1 ? ", " : "") + nodes_[failed[k]].name;
  if (failed.size() > 6) others += ", ...";
  return Status(first.code(), first.message() + "; and " + std::to_string(failed.size() - 1) +
                                  " more agent" + (failed.size() > 2 ? "s" : "") +
                                  " failed the same step: " + others);
}

template <typename T>
Status DrillAgents::FirstFailure(const std::vector<Result<T>>& each) const {
  std::vector<Status> statuses;
  for (const auto& r : each) statuses.push_back(r.status());
  return FirstFailure(statuses);
}

Result<Json> DrillAgents::Reconnect(const std::string& name, Duration within) {
  NodeLink& n = node(name);
  const auto deadline = clock_.Now() + within;
  Status dialled = n.link->Reconnect(std::chrono::seconds(1));
  while (!dialled.ok() && dialled.code() != StatusCode::kFailedPrecondition) {
    if (closing_ || clock_.Now() >= deadline) {
      return dialled.Annotate("not back within " + FormatDuration(within));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    dialled = n.link->Reconnect(std::chrono::seconds(1));
  }
  if (!dialled.ok()) return dialled;
  auto hello = n.link->Call(proto::kHello, {}, kCallTimeout);
  if (!hello.ok()) return hello.status();
  if (hello->value(proto::key::kNode, "") != n.name) {
    return FailedPrecondition("agent at " + n.link->address() + " says it is " +
                              hello->value(proto::key::kNode, "") + ", expected " + n.name);
  }
  // The drill's own lease again: its id and this agent's limits, as at Connect.
  const size_t index = static_cast<size_t>(&n - nodes_.data());
  auto lease = n.link->Call(
      proto::kLease,
      LeaseBody(index, std::chrono::duration_cast<std::chrono::milliseconds>(s_.lease_ttl).count()),
      kCallTimeout);
  if (!lease.ok()) return lease.status();
  return hello;
}

NodeLink& DrillAgents::node(const std::string& name) {
  return *std::find_if(nodes_.begin(), nodes_.end(),
                       [&](const NodeLink& x) { return x.name == name; });
}

std::vector<std::string> DrillAgents::Names() const {
  std::vector<std::string> out;
  out.reserve(nodes_.size());
  for (const NodeLink& n : nodes_) out.push_back(n.name);
  return out;
}

const AgentFacts& DrillAgents::Facts(const std::string& name) const {
  return *std::find_if(nodes_.begin(), nodes_.end(),
                       [&](const NodeLink& x) { return x.name == name; });
}

Result<Json> DrillAgents::Call(const std::string& name, const std::string& type, const Json& body,
                               Duration timeout) {
  return node(name).link->Call(type, body, timeout);
}

std::vector<Result<Json>> DrillAgents::CallEach(const std::string& type, const Json& body,
                                                Duration timeout) {
  return CallEachWith(type, std::vector<Json>(nodes_.size(), body), timeout);
}

std::vector<Result<Json>> DrillAgents::CallEachWith(const std::string& type,
                                                    const std::vector<Json>& bodies,
                                                    Duration timeout) {
  std::vector<NodeLink*> to;
  for (size_t i = 0; i < std::min(bodies.size(), nodes_.size()); ++i) to.push_back(&nodes_[i]);
  return CallAll(to, type, bodies, timeout);
}

std::vector<Result<Json>> DrillAgents::CallEachNamed(const std::vector<std::string>& names,
                                                     const std::string& type,
                                                     const std::vector<Json>& bodies,
                                                     Duration timeout) {
  std::vector<NodeLink*> to;
  for (const auto& name : names) to.push_back(&node(name));
  return CallAll(to, type, bodies, timeout);
}

std::vector<Result<Json>> DrillAgents::CallAll(const std::vector<NodeLink*>& to,
                                               const std::string& type,
                                               const std::vector<Json>& bodies, Duration timeout,
                                               std::vector<int64_t>* sent_ns,
                                               std::vector<int64_t>* answered_ns) {
  // Every agent at once (AgentLink::CallAsync), then wait for the answers
  // until the deadline: a round costs the slowest agent, not their sum.
  struct Round {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<Result<Json>>> replies;
    size_t pending = 0;
  };
  const size_t count = std::min(bodies.size(), to.size());
  auto round = std::make_shared<Round>();
  round->replies.resize(count);
  round->pending = count;
  std::vector<uint64_t> ids(count);
  for (size_t i = 0; i < count; ++i) {
    if (sent_ns != nullptr) (*sent_ns)[i] = clock_.WallNanos();
    int64_t* answered = answered_ns != nullptr ? &(*answered_ns)[i] : nullptr;
    ids[i] = to[i]->link->CallAsync(type, bodies[i], [this, round, i, answered](Result<Json> r) {
      const int64_t now = clock_.WallNanos();
      std::lock_guard<std::mutex> lock(round->mu);
      if (round->replies[i]) return;
      if (answered != nullptr) *answered = now;
      round->replies[i] = std::move(r);
      --round->pending;
      round->cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(round->mu);
  round->cv.wait_for(lock, timeout, [&] { return round->pending == 0; });
  std::vector<Result<Json>> out;
  for (size_t i = 0; i < count; ++i) {
    if (round->replies[i]) {
      out.push_back(std::move(*round->replies[i]));
    } else {
      to[i]->link->Forget(ids[i]);
      out.push_back(DeadlineExceeded(type + " to " + to[i]->name + ": no answer within " +
                                     FormatDuration(timeout)));
    }
  }
  return out;
}

void DrillAgents::LeaseLoop() {
  const int64_t ttl_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(s_.lease_ttl).count();
  const size_t n = nodes_.size();
  if (n == 0) return;
  // Agent i is renewed in slice i % slices of each period: a steady stream
  // instead of every agent at once, a burst that at 10,000 agents lands on
  // whatever the drill does at that instant (an apply fan-out, the agents'
  // counters). Each agent is still renewed once every lease_renew.
  const size_t slices = std::min(n, kLeaseSlices);
  const Duration step = s_.lease_renew / static_cast<int64_t>(slices);
  const std::string period = FormatDuration(s_.lease_renew);
  std::shared_ptr<LeaseRenewals> r = renewals_;
  r->Restart(clock_.Now());
  auto next = clock_.Now();
  for (size_t slice = 0; !closing_; slice = (slice + 1) % slices) {
    for (size_t i = slice; i < n && !closing_; i += slices) {
      const LeaseRenewals::Turn turn = r->TakeTurn(i, period);
      if (turn.forget != 0) nodes_[i].link->Forget(turn.forget);
      // One late answer (an agent busy stopping a job) is not a lost lease:
      // the lease still holds until lease_ttl after the last renewal. Once
      // it may lapse before the next try, the agent reverts everything by
      // itself and the drill can no longer say what the fabric did: it ends.
      if (!closing_ && turn.Lost(clock_.Now(), s_.lease_renew, s_.lease_ttl))
        on_lost_(nodes_[i].name, "lease renewal failed: " + turn.failed);
      // Acknowledged in the agent's next push, within a period: no reply
      // comes unless the agent refuses (or predates acknowledgement by
      // push), which answers through the callback.
      const uint64_t seq = r->Sent(i, clock_.Now());
      const uint64_t id =
          nodes_[i].link->CallAsync(proto::kLease, RenewalBody(i, ttl_ms, seq),
                                    [r, i, seq](Result<Json> reply) { r->Replied(i, seq, reply); });
      r->CallId(i, seq, id);
    }
    next += step;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, next, [this] { return closing_.load(); });
  }
}

void DrillAgents::Shutdown() {
  {
    // Under mu_, so the lease thread cannot miss the wake-up between its
    // check of closing_ and its wait.
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (lease_thread_.joinable()) lease_thread_.join();
  bool all_linked = !nodes_.empty();
  for (auto& n : nodes_) all_linked = all_linked && n.link != nullptr;
  if (all_linked)
    (void)CallEach(proto::kLease, LeaseBody(0, 0), std::chrono::seconds(2));  // released
  for (auto& n : nodes_) {
    if (n.link) n.link->Close();
  }
  work_.reset();
  if (io_thread_.joinable()) {
    io_.stop();
    io_thread_.join();
  }
  nodes_.clear();
  limits_.clear();
}

}  // namespace fdrill
