#include "reports/slurm_changes.h"

#include <map>

#include <fmt/format.h>

namespace fdrill {

std::vector<SlurmChange> AnalyzeSlurm(const std::vector<Event>& events) {
  std::vector<SlurmChange> out;
  std::map<std::string, std::string> last;  // "node n1" / "job 7" -> state
  for (const Event& e : events) {
    if (e.type != "slurm_node" && e.type != "slurm_job") continue;
    SlurmChange c;
    c.t = e.t;
    c.to = e.state;
    std::string key;
    if (e.type == "slurm_node") {
      c.node = e.node;
      c.reason = e.reason;
      key = "node " + e.node;
    } else {
      c.job = e.job;
      key = "job " + e.job;
    }
    c.from = last[key];
    last[key] = e.state;
    out.push_back(std::move(c));
  }
  return out;
}

std::string SlurmChangeText(const SlurmChange& c) {
  std::string who = c.job.empty() ? c.node : "job " + c.job;
  std::string text = fmt::format("t={:.1f} s: {} ", c.t, who);
  text += c.from.empty() ? c.to : c.from + " → " + c.to;
  if (!c.reason.empty() && c.reason != "none") text += " (" + c.reason + ")";
  return text;
}

}  // namespace fdrill
