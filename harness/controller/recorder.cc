#include "harness/controller/recorder.h"

#include <filesystem>

#include "common/core/json.h"

namespace fdrill {

Result<std::unique_ptr<RunRecorder>> RunRecorder::Create(const std::string& dir,
                                                         const Clock& clock) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_empty(dir, ec)) {
    return FailedPrecondition("--out " + dir +
                              " exists and is not empty; choose a new run directory");
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) return FailedPrecondition("cannot create run directory " + dir + ": " + ec.message());
  auto r =
      std::unique_ptr<RunRecorder>(new RunRecorder(std::filesystem::absolute(dir).string(), clock));
  r->events_.open(r->dir_ + "/events.jsonl");
  r->metrics_.open(r->dir_ + "/metrics.jsonl");
  if (!r->events_ || !r->metrics_) return FailedPrecondition("cannot write in " + dir);
  return r;
}

RunRecorder::RunRecorder(std::string dir, const Clock& clock)
    : dir_(std::move(dir)), clock_(clock), start_(clock.Now()), start_wall_ns_(clock.WallNanos()) {}

double RunRecorder::Now() const {
  return std::chrono::duration<double>(clock_.Now() - start_).count();
}

double RunRecorder::Event(const std::string& type, Json fields) {
  std::lock_guard<std::mutex> lock(mu_);
  double t = Now();
  Json line = {{"t", t}, {"type", type}};
  for (auto& [k, v] : fields.items()) line[k] = v;
  events_ << DumpJson(line) << "\n";
  events_.flush();
  return t;
}

size_t RunRecorder::Metrics(const std::string& node, const Json& records, int64_t agent_offset_ns,
                            int attempt, const std::string& workload) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& rec : records) {
    if (!rec.is_object() || !rec.contains("wall_ns")) continue;
    Json line = rec;
    int64_t wall = rec["wall_ns"].get<int64_t>() - agent_offset_ns;
    line["node"] = node;
    if (attempt > 0) line["attempt"] = attempt;
    if (!workload.empty()) line["workload"] = workload;
    line["t"] = static_cast<double>(wall - start_wall_ns_) / 1e9;
    metrics_ << DumpJson(line) << "\n";
    ++n;
  }
  metrics_.flush();
  return n;
}

Status RunRecorder::WriteFile(const std::string& name, const std::string& content) {
  std::ofstream out(dir_ + "/" + name);
  out << content;
  out.flush();
  if (!out) return FailedPrecondition("cannot write " + dir_ + "/" + name);
  return Status::Ok();
}

}  // namespace fdrill
