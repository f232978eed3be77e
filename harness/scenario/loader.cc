// The scenario loader's entry points: the file's text checked (UTF-8, YAML,
// the top-level keys), then each section loaded by its own file
// (load_sections.h) in dependency order. With topology.cc, only
// harness/scenario includes yaml-cpp. Every mapping is checked against the
// keys it may hold, so a typo is an error with file:line:col and a hint,
// never a silently ignored setting.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "common/core/did_you_mean.h"
#include "common/core/expectable_metrics.h"
#include "common/core/files.h"
#include "common/core/json.h"
#include "harness/scenario/load_sections.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/yaml_errors.h"
#include "harness/scenario/yaml_reader.h"

namespace fdrill {

namespace {

class Loader {
 public:
  Loader(std::string file, std::string base_dir) : y_(std::move(file), std::move(base_dir)) {}

  // Never throws: a yaml-cpp exception that escapes is a refusal.
  Result<Scenario> Load(const std::string& text);

 private:
  Result<Scenario> LoadChecked(const std::string& text);
  Status CheckOutputNone(const YAML::Node& root, const Scenario& s) const;
  Status CheckTenantStarts(const YAML::Node& root, const Scenario& s) const;

  YamlReader y_;
};

Result<Scenario> Loader::Load(const std::string& text) {
  // Every conversion (YamlReader) checks its node first; a yaml-cpp exception that
  // still escapes (a case we missed) is a refusal naming the place, never a
  // crash of `fdrill run` (scenario_fuzz found one: name: {nodes: 4}).
  try {
    return LoadChecked(text);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return InvalidArgument(y_.file() + ": " + e.msg);
    return InvalidArgument(y_.file() + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

Result<Scenario> Loader::LoadChecked(const std::string& text) {
  // Scenario strings travel as JSON (plan.json, the wire), which must be UTF-8.
  if (size_t bad = FirstInvalidUtf8(text); bad != std::string::npos) {
    const size_t line_start = text.rfind('\n', bad == 0 ? 0 : bad - 1);
    const size_t line =
        static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n')) +
        1;
    const size_t column = line_start == std::string::npos || bad == 0 ? bad + 1 : bad - line_start;
    return InvalidArgument(y_.file() + ":" + std::to_string(line) + ":" + std::to_string(column) +
                           ": not valid UTF-8 (a scenario is UTF-8 text)");
  }
  auto parsed = LoadYaml(y_.file(), text);
  if (!parsed.ok()) return parsed.status();
  const YAML::Node root = *parsed;
  Scenario s;
  Targets targets;
  s.file = y_.file();
  s.text = text;
  if (!root.IsMap())
    return InvalidArgument(y_.file() +
                           ": a scenario is a YAML mapping (name, fabric, workload, phases, ...)");
  if (auto st = y_.CheckKeys(root, "the scenario",
                             {"name", "description", "fabric", "topology", "targets", "workload",
                              "workloads", "phases", "safety", "expect", "analysis"});
      !st.ok())
    return st;
  if (!root["name"]) return InvalidArgument(y_.file() + ": the scenario needs a name");
  auto name = y_.Str(root["name"], "name");
  if (!name.ok()) return name.status();
  // The name becomes a directory (runs/<time>-<name>/): one path component.
  if (Status st = CheckPathComponent(*name); !st.ok())
    return y_.Error(root["name"], "name: " + st.message());
  s.name = *name;
  if (root["description"]) {
    auto d = y_.Str(root["description"], "description");
    if (!d.ok()) return d.status();
    s.description = *d;
  }
  if (!root["fabric"])
    return InvalidArgument(
        y_.file() +
        ": the scenario needs fabric: {emulated: {nodes: N}}, {hosts: FILE} or {slurm: true}");
  if (auto st = LoadFabric(y_, root["fabric"], &s); !st.ok()) return st;
  if (root["topology"]) {
    if (auto st = LoadTopologyKey(y_, root["topology"], &s); !st.ok()) return st;
  }
  if (root["targets"]) {
    if (auto st = LoadTargets(y_, root["targets"], s, &targets); !st.ok()) return st;
  }
  if (root["workload"] && root["workloads"]) {
    return y_.Error(root["workloads"],
                    "workload and workloads are exclusive: one job on every node (workload:) or "
                    "named tenants each on its own nodes (workloads:)");
  }
  if (root["workload"]) {
    if (auto st = LoadWorkload(y_, root["workload"], &s); !st.ok()) return st;
  }
  if (root["workloads"]) {
    if (auto st = LoadTenants(y_, root["workloads"], &s); !st.ok()) return st;
  }
  if (root["safety"]) {
    if (auto st = LoadSafety(y_, root["safety"], &s); !st.ok()) return st;
  }
  if (!root["phases"]) return InvalidArgument(y_.file() + ": the scenario needs phases");
  if (auto st = LoadPhases(y_, root["phases"], targets, &s); !st.ok()) return st;
  if (auto st = CheckTenantStarts(root, s); !st.ok()) return st;
  if (root["expect"]) {
    if (auto st = LoadExpect(y_, root["expect"], s, &s.expect); !st.ok()) return st;
  }
  if (root["analysis"]) {
    if (auto st = y_.CheckKeys(root["analysis"], "analysis", {"recovery_window"}); !st.ok())
      return st;
    if (root["analysis"]["recovery_window"]) {
      auto w = y_.Int(root["analysis"]["recovery_window"], "analysis.recovery_window", 1, 1000);
      if (!w.ok()) return w.status();
      s.recovery_window_iters = static_cast<int>(*w);
    }
  }
  if (auto st = CheckOutputNone(root, s); !st.ok()) return st;
  return s;
}

// workloads.NAME.start names a phase of the timeline (once, as written:
// not a repeat's copy), and not the first.
Status Loader::CheckTenantStarts(const YAML::Node& root, const Scenario& s) const {
  std::vector<std::string> names;
  for (const auto& p : s.phases) names.push_back(p.name);
  for (const auto& t : s.tenants) {
    if (t.start.empty()) continue;
    const YAML::Node at = root["workloads"][t.name]["start"];
    const auto it = std::find(names.begin(), names.end(), t.start);
    if (it == names.end()) {
      std::string hint = DidYouMean(t.start, std::set<std::string>(names.begin(), names.end()));
      return y_.Error(at, "workloads." + t.name + ".start: no phase is named \"" + t.start + "\"" +
                              (hint.empty() ? "" : "; " + hint));
    }
    if (it == names.begin()) {
      return y_.Error(at, "workloads." + t.name + ".start: " + t.start +
                              " is the first phase; drop start to run from the beginning");
    }
  }
  return Status::Ok();
}

// A command whose output is not read reports no iterations: anything
// that waits for or measures them could never be met.
Status Loader::CheckOutputNone(const YAML::Node& root, const Scenario& s) const {
  if (s.workload.output != "none") return Status::Ok();
  const YAML::Node w = root["workload"];
  const YAML::Node at = w["output"] ? w["output"] : w["command"];
  std::string needs;
  for (const auto& p : s.phases) {
    if (p.gate && needs.empty()) needs = "phase " + p.name + "'s until: stable";
  }
  if (needs.empty() && (s.stop.min_busbw_gbps || s.stop.max_iteration_time))
    needs = "safety.stop's busbw and iteration-time conditions";
  if (needs.empty() && s.workload.restart.hang_timeout) needs = "workload.restart.hang_timeout";
  if (needs.empty() && (s.expect.max_slowdown || s.expect.max_time_to_recover_s))
    needs = "expect's max_slowdown and max_time_to_recover";
  if (!needs.empty()) {
    return y_.Error(
        at, "workload.output none: the drill sees no iterations of this command, so " + needs +
                " can never be measured; use output: nccl-tests (a *_perf binary) or drop it");
  }
  return Status::Ok();
}

}  // namespace

Status ScaleTimes(Scenario* s, double factor, const std::string& flag) {
  if (!(factor >= 0.1 && factor <= 10)) {
    return InvalidArgument(flag +
                           ": a factor from 0.1 to 10 (0.5 runs every phase and fault window at "
                           "half its length)");
  }
  const auto scale = [factor](Duration& d) {
    d = std::chrono::round<std::chrono::milliseconds>(d * factor);
  };
  for (PhaseSpec& p : s->phases) {
    scale(p.duration);
    if (p.gate) scale(p.gate->timeout);
    for (FaultSpec& f : p.faults) {
      scale(f.at);
      scale(f.length);
      scale(f.max_duration);
    }
  }
  s->time_scale *= factor;
  return Status::Ok();
}

Duration Scenario::TotalDuration() const {
  Duration total{};
  for (const auto& p : phases) total += p.MaxDuration();
  return total;
}

std::vector<WorkloadSpec> Scenario::Workloads() const {
  if (!tenants.empty()) return tenants;
  WorkloadSpec all = workload;
  all.nodes = NodeNames();
  return {all};
}

std::vector<std::string> Scenario::SwitchTargets() const {
  std::set<std::string> names;
  for (const auto& p : phases) {
    for (const auto& f : p.faults) {
      if (f.on_switch) names.insert(f.node);
    }
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> Scenario::NodeNames() const {
  if (!Emulated()) return host_names;
  std::vector<std::string> out;
  for (int i = 0; i < nodes; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

std::string Scenario::FabricName() const {
  if (slurm) return "Slurm allocation " + slurm_nodelist;
  if (!hosts_file.empty()) return "hosts file " + hosts_file;
  return "emulated n0..n" + std::to_string(nodes - 1);
}

const std::vector<std::string>& ExpectableMetrics() {
  static const std::vector<std::string> kNames(kExpectableMetrics.begin(),
                                               kExpectableMetrics.end());
  return kNames;
}

Result<Scenario> ParseScenario(const std::string& text, const std::string& file_name,
                               const std::string& base_dir) {
  return Loader(file_name, base_dir).Load(text);
}

Result<Scenario> LoadScenario(const std::string& path) {
  // A regular file, and not a huge one: /dev/zero would never end, a FIFO
  // would block, and a 50 MB file took 367 MB to parse.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    return NotFound(path + ": cannot open the scenario file (" +
                    (ec ? ec.message() : std::string("no such file")) + ")");
  if (!std::filesystem::is_regular_file(st)) {
    return InvalidArgument(
        path + ": not a regular file (" +
        (std::filesystem::is_directory(st) ? "a directory" : "a device or pipe") +
        "); a scenario is a YAML file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxScenarioBytes) {
    return InvalidArgument(path + ": " + std::to_string(size) +
                           " bytes; a scenario file holds at "
                           "most " +
                           std::to_string(kMaxScenarioBytes) +
                           " (1 MiB; repeat: and hostlists make a long drill short to write)");
  }
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open the scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().size() > kMaxScenarioBytes)
    return InvalidArgument(path + ": grew past " + std::to_string(kMaxScenarioBytes) +
                           " bytes while it was read");
  const auto dir = std::filesystem::path(path).parent_path();
  return ParseScenario(ss.str(), path, dir.empty() ? "." : dir.string());
}

}  // namespace fdrill
