#include "workloads/job_rank.h"

#include <charconv>

#include <nlohmann/json.hpp>

#include "common/core/json.h"

namespace fdrill {

namespace {

std::optional<int> IntOf(const std::map<std::string, std::string>& env, const char* key) {
  auto it = env.find(key);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  int v = 0;
  const char* end = it->second.data() + it->second.size();
  auto [p, ec] = std::from_chars(it->second.data(), end, v);
  if (ec != std::errc() || p != end || v < 0) return std::nullopt;
  return v;
}

}  // namespace

Result<LaunchedRank> RankFromLauncher(const std::map<std::string, std::string>& env) {
  struct Names {
    const char *rank, *size, *local, *source;
  };
  static const Names kLaunchers[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "mpirun"},
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "srun"},
      {"PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "pmix"},
      {"RANK", "WORLD_SIZE", "LOCAL_RANK", "torchrun"},
  };
  for (const Names& n : kLaunchers) {
    auto rank = IntOf(env, n.rank);
    auto size = IntOf(env, n.size);
    if (!rank || !size || *rank >= *size) continue;
    return LaunchedRank{*rank, *size, IntOf(env, n.local).value_or(0), n.source};
  }
  return NotFound(
      "no launcher's rank in the environment (OMPI_COMM_WORLD_RANK/_SIZE, SLURM_PROCID/"
      "SLURM_NTASKS, PMIX_RANK/PMIX_SIZE or RANK/WORLD_SIZE): run it under mpirun, srun or "
      "torchrun");
}

std::map<std::string, std::string> FrameworkEnv(const std::map<std::string, std::string>& env,
                                                const LaunchedRank& r, const FrameworkVars& f) {
  std::map<std::string, std::string> out;
  auto set = [&](const char* key, const std::string& value) {
    if (!env.count(key)) out[key] = value;
  };
  out[kJobRankEnv] = std::to_string(r.rank);
  set("PYTHONUNBUFFERED", "1");
  if (f.framework == "pytorch") {
    set("RANK", std::to_string(r.rank));
    set("WORLD_SIZE", std::to_string(r.world));
    set("LOCAL_RANK", std::to_string(r.local_rank));
    if (!f.master_addr.empty()) set("MASTER_ADDR", f.master_addr);
    if (f.master_port > 0) set("MASTER_PORT", std::to_string(f.master_port));
    if (!f.socket_ifname.empty()) set("GLOO_SOCKET_IFNAME", f.socket_ifname);
  }
  return out;
}

std::optional<StepRecord> ParseMetricsFileLine(std::string_view line) {
  const Json j = Json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto step = j.find("step");
  if (step == j.end() || !step->is_number_integer() || step->get<int64_t>() < 0) {
    return std::nullopt;
  }
  // A number it names must be a number: a job that got its format wrong is
  // not timed by the interval behind its back.
  for (const char* key : {"time_ms", "time_s", "loss", "tokens_per_s", "samples_per_s"}) {
    const auto it = j.find(key);
    if (it != j.end() && !it->is_number()) return std::nullopt;
  }
  StepRecord r;
  r.step = step->get<int64_t>();
  auto number = [&](const char* key) -> std::optional<double> {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  if (auto ms = number("time_ms")) {
    r.time_ms = *ms;
    r.timed_by_job = true;
  } else if (auto s = number("time_s")) {
    r.time_ms = *s * 1000.0;
    r.timed_by_job = true;
  }
  if (r.timed_by_job && !(r.time_ms > 0)) return std::nullopt;
  r.loss = number("loss");
  r.tokens_per_s = number("tokens_per_s");
  r.samples_per_s = number("samples_per_s");
  return r;
}

std::string StepMetricsLine(const StepRecord& s, int64_t steps, const StepMeta& meta) {
  return DumpJson(StepMetricsJson(s, steps, meta));
}

Json StepMetricsJson(const StepRecord& s, int64_t steps, const StepMeta& meta) {
  if (steps < 1) steps = 1;
  const double time_ms = s.time_ms * static_cast<double>(steps);
  const double per_s = time_ms > 0 ? static_cast<double>(steps) * 1000.0 / time_ms : 0.0;
  Json j;
  j["rank"] = meta.rank;
  j["nranks"] = meta.nranks;
  j["host"] = meta.host;
  j["iter"] = s.step;
  j["op"] = "step";
  j["bytes"] = static_cast<uint64_t>(steps) * kStepBytes;
  j["count"] = steps;
  j["wall_ns"] = meta.wall_ns;
  j["mono_ns"] = meta.mono_ns;
  j["time_ms"] = time_ms;
  j["algbw_gbps"] = per_s;
  j["busbw_gbps"] = per_s;
  j["wrong"] = 0;
  j["step"] = s.step;
  j["restarted"] = meta.restarted;
  if (s.loss) j["loss"] = *s.loss;
  if (s.tokens_per_s) j["tokens_per_s"] = *s.tokens_per_s;
  if (s.samples_per_s) j["samples_per_s"] = *s.samples_per_s;
  j["timed_by_job"] = s.timed_by_job;
  return j;
}

}  // namespace fdrill
