// DrillAgents: a drill's connections to its agents — one AgentLink per node
// and per switch a fault names (the emulated fabric's switch agents), at the
// addresses its DrillTargets give, on one
// io thread, the lease every agent holds while the drill runs, and calls to
// every agent at once.
//
// Contract:
//  - Connect dials every node and every switch a fault names
//    (Scenario::SwitchTargets()) at once (ConnectAll), then, again to all
//    at once, checks that each agent is the node it should be, measures
//    its clock offset and takes its lease; a failure names the first agent
//    in that order and how many others failed. Then a lease thread renews
//    every lease each lease_renew, the agents spread over the period (a
//    tenth of them every tenth of it), not all at once, each renewal
//    acknowledged in the agent's next push rather than by a reply
//    (lease_renewals.h, docs/reference/protocol.md "lease"). A renewal that fails
//    long enough for the lease to lapse, or a dropped connection, is
//    reported once to on_lost: the agent reverts everything by itself then,
//    and the drill can no longer say what the fabric did.
//  - on_push and on_lost run on the io thread (on_lost also on the lease
//    thread); nothing is reported once Shutdown has begun.
//  - Reconnect redials a lost agent (a restarted one: the emulated fabric's
//    supervisor, a node's systemd unit) on the same link, so every
//    component keeps its NodeLink.
//  - Shutdown (also the destructor) stops the lease thread, releases every
//    lease (ttl 0), closes the links and joins the io thread. Safe after a
//    failed Connect, and twice.
#pragma once

// clang-format off
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
// clang-format on

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "harness/controller/agent_calls.h"
#include "harness/controller/agent_link.h"
#include "harness/controller/drill_targets.h"
#include "harness/controller/lease_renewals.h"
#include "harness/scenario/scenario.h"

namespace fdrill {

struct DrillOptions;

// One agent: what it said at hello (AgentFacts), and its link.
struct NodeLink : AgentFacts {
  std::string address;  // where its agent listens
  uint16_t port = 0;
  std::unique_ptr<AgentLink> link;
};

class DrillAgents final : public AgentCalls {
 public:
  // The lease thread renews a tenth of the agents every tenth of lease_renew.
  static constexpr size_t kLeaseSlices = 10;
  using PushFn = std::function<void(const NodeLink& node, const Json& msg)>;
  using LostFn = std::function<void(const std::string& node, const std::string& message)>;

  // `targets`: where each node's agent and each switch's listens
  // (drill_targets.h); both outlive the DrillAgents.
  DrillAgents(const Scenario& s, const DrillTargets& targets, const Clock& clock)
      : s_(s), targets_(targets), clock_(clock) {}
  ~DrillAgents() { Shutdown(); }
  DrillAgents(const DrillAgents&) = delete;
  DrillAgents& operator=(const DrillAgents&) = delete;

  // `drill`: this drill's id, the lease's owner beside the certificate
  // (agents/lease.h); every request to every agent carries it.
  Status Connect(const DrillOptions& opt, const std::string& drill, PushFn on_push, LostFn on_lost);
  void Shutdown();

  // A lost agent back: dials `name` again (AgentLink::Reconnect) until it
  // answers or `within` has passed, checks it is that node (hello) and
  // gives it the drill's lease. Returns its hello reply, which says what
  // its start-up journal sweep reverted (proto::key::kStartSweep). The
  // clock offset is kept: it is the host's clock, not the process's.
  Result<Json> Reconnect(const std::string& name, Duration within);

  // The workload's nodes, in the scenario's node order; stable from Connect
  // to Shutdown.
  std::span<NodeLink> nodes() { return {nodes_.data(), std::min(node_count_, nodes_.size())}; }
  // Every agent: the nodes, then the switches faults name.
  std::vector<NodeLink>& agents() { return nodes_; }
  // A node or a switch by name.
  NodeLink& node(const std::string& name);

  // AgentCalls.
  std::vector<std::string> Names() const override;
  const AgentFacts& Facts(const std::string& name) const override;
  Result<Json> Call(const std::string& name, const std::string& type, const Json& body,
                    Duration timeout) override;

  // `type` to every agent (nodes and switches) in parallel; one result per
  // agent, in agents() order. An agent that has not answered by `timeout`
  // is a DeadlineExceeded.
  std::vector<Result<Json>> CallEach(const std::string& type, const Json& body, Duration timeout);
  // ... with a body per agent, to the first bodies.size() agents (the
  // nodes, when one body per node is given).
  std::vector<Result<Json>> CallEachWith(const std::string& type, const std::vector<Json>& bodies,
                                         Duration timeout);
  // ... with a body per named agent (names as node() takes them), in order.
  std::vector<Result<Json>> CallEachNamed(const std::vector<std::string>& names,
                                          const std::string& type, const std::vector<Json>& bodies,
                                          Duration timeout) override;

 private:
  // sent_ns / answered_ns (sized like `to`): each request's send and its
  // reply's arrival, wall clock, for the clock offsets.
  std::vector<Result<Json>> CallAll(const std::vector<NodeLink*>& to, const std::string& type,
                                    const std::vector<Json>& bodies, Duration timeout,
                                    std::vector<int64_t>* sent_ns = nullptr,
                                    std::vector<int64_t>* answered_ns = nullptr);
  // Hello to every agent at once: is it the node it should be, its clock
  // offset, tmpdir and hostname.
  Status HelloAll();
  // Ok, or the first failure in agent order with how many others failed
  // and a few of their names.
  Status FirstFailure(const std::vector<Status>& each) const;
  template <typename T>
  Status FirstFailure(const std::vector<Result<T>>& each) const;
  // Renews every lease each lease_renew, agent i in slice i % kLeaseSlices
  // of the period, without waiting for the answers (they come back on the io
  // thread, as a push's acknowledgement or a reply): a renewal unanswered
  // two turns after it went has failed (lease_renewals.h).
  void LeaseLoop();
  // The lease request for agent `i` (ttl 0 releases): drill id and limits.
  Json LeaseBody(size_t i, int64_t ttl_ms) const;
  // ... renewal number `renewal`, to be acknowledged by push within a
  // lease_renew (proto::key::kAck).
  Json RenewalBody(size_t i, int64_t ttl_ms, uint64_t renewal) const;
  // The lease thread's renewals, shared with the links' callbacks on the io
  // thread (which may outlive the thread's loop); made in Connect.
  std::shared_ptr<LeaseRenewals> renewals_;
  // Each agent's limits (LeaseLimitsFor), computed once in Connect: the
  // scenario does not change during the drill, and renewals go every second.
  std::vector<Json> limits_;

  const Scenario& s_;
  const DrillTargets& targets_;
  const Clock& clock_;
  std::string drill_;
  LostFn on_lost_;
  boost::asio::io_context io_;
  std::unique_ptr<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread io_thread_;
  std::thread lease_thread_;
  std::vector<NodeLink> nodes_;  // the nodes, then the switches
  size_t node_count_ = 0;
  std::atomic<bool> closing_{false};
  std::mutex mu_;  // for cv_ only: the lease thread's wait
  std::condition_variable cv_;
};

}  // namespace fdrill
