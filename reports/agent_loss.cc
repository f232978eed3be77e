#include "reports/agent_loss.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace fdrill {

namespace {

// The kind and target each fault was applied with, by id.
std::map<std::string, std::pair<std::string, std::string>> FaultKinds(
    const std::vector<Event>& events) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const Event& e : events) {
    if (e.type != "fault_apply" && e.type != "fault_applied") continue;
    auto& [kind, target] = out[e.id];
    if (!e.kind.empty()) kind = e.kind;
    if (!e.target.empty()) target = e.target;  // fault_applied's resolved one wins
  }
  return out;
}

// "14:02:03.1" (UTC) from wall ns, or "t=41.2 s" without one.
std::string When(const std::optional<int64_t>& wall_ns, double t) {
  if (!wall_ns) return fmt::format("t={:.1f} s", t);
  const std::time_t secs = static_cast<std::time_t>(*wall_ns / 1'000'000'000);
  const int tenths = static_cast<int>((*wall_ns / 100'000'000) % 10);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:02}:{:02}:{:02}.{}", tm.tm_hour, tm.tm_min, tm.tm_sec, tenths);
}

std::string Describe(const LeftFault& f) {
  if (f.kind.empty()) return "fault " + f.id;
  return fmt::format("fault {} ({}{})", f.id, f.kind, f.target.empty() ? "" : " " + f.target);
}

}  // namespace

std::vector<AgentLoss> AnalyzeAgentLosses(const std::vector<Event>& events) {
  const auto kinds = FaultKinds(events);
  std::vector<AgentLoss> losses;
  std::map<std::string, size_t> open;  // node -> its latest loss in `losses`
  auto left = [&](const std::string& id) {
    LeftFault f{.id = id};
    if (auto it = kinds.find(id); it != kinds.end()) std::tie(f.kind, f.target) = it->second;
    return f;
  };
  for (const Event& e : events) {
    if (e.type == "agent_lost") {
      AgentLoss loss{
          .node = e.node, .reason = e.reason, .lost_at_s = e.t, .lost_wall_ns = e.wall_ns};
      for (const auto& id : e.ids) loss.faults_left.push_back(left(id));
      open[e.node] = losses.size();
      losses.push_back(std::move(loss));
      continue;
    }
    auto it = open.find(e.node);
    if (it == open.end()) continue;
    AgentLoss& loss = losses[it->second];
    if (e.type == "agent_reconnected") {
      loss.back_at_s = e.t;
    } else if (e.type == "faults_swept") {
      for (const auto& id : e.ids) {
        auto f = std::find_if(loss.faults_left.begin(), loss.faults_left.end(),
                              [&](const LeftFault& x) { return x.id == id; });
        if (f == loss.faults_left.end()) {
          loss.faults_left.push_back(left(id));
          f = std::prev(loss.faults_left.end());
        }
        f->swept_at_s = e.at_s.value_or(e.t);
        f->swept_wall_ns = e.wall_ns;
      }
    }
  }
  return losses;
}

std::string LeftFaultText(const AgentLoss& loss, const LeftFault& fault) {
  const std::string lost = When(loss.lost_wall_ns, loss.lost_at_s);
  if (fault.swept_at_s) {
    return fmt::format(
        "{}: {} left applied while the agent was down {}–{}, reverted by the restarted agent's "
        "journal sweep",
        loss.node, Describe(fault), lost, When(fault.swept_wall_ns, *fault.swept_at_s));
  }
  return fmt::format(
      "{}: {} was in force when the agent was lost at {}; {} — the residue check says what is "
      "left",
      loss.node, Describe(fault), lost,
      loss.back_at_s ? "the restarted agent's journal sweep did not list it"
                     : "the drill did not reach the agent again (a live one reverts it itself "
                       "when its lease lapses, a dead one when it starts again)");
}

std::string AgentLossText(const AgentLoss& loss) {
  std::string text = fmt::format("{}: the agent was lost at {} ({})", loss.node,
                                 When(loss.lost_wall_ns, loss.lost_at_s), loss.reason);
  text += loss.faults_left.empty() ? " with no fault in force" : "";
  text += loss.back_at_s ? fmt::format(", back at t={:.1f} s", *loss.back_at_s)
                         : ", and the drill did not reach it again";
  return text;
}

}  // namespace fdrill
