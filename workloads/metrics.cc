#include "workloads/metrics.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "workloads/collective.h"

namespace fdrill {

namespace {

void ReplaceAll(std::string* text, std::string_view from, std::string_view to) {
  for (size_t pos = text->find(from); pos != std::string::npos;
       pos = text->find(from, pos + to.size())) {
    text->replace(pos, from.size(), to);
  }
}

}  // namespace

std::string ToJsonLine(const IterationRecord& r) {
  // ordered_json keeps formats.md's key order, which helps people reading
  // the file; readers must not depend on it.
  nlohmann::ordered_json j;
  j["rank"] = r.rank;
  j["nranks"] = r.nranks;
  j["host"] = r.host;
  j["iter"] = r.iter;
  j["op"] = r.op;
  j["dtype"] = r.dtype;
  j["redop"] = r.redop;
  j["bytes"] = r.bytes;
  j["count"] = r.count;
  j["wall_ns"] = r.wall_ns;
  j["mono_ns"] = r.mono_ns;
  j["time_ms"] = r.time_ms;
  if (!r.step) j["wait_ms"] = r.wait_ms;  // the sweep's line-up; training has none
  j["algbw_gbps"] = r.algbw_gbps;
  j["busbw_gbps"] = r.busbw_gbps;
  j["wrong"] = r.wrong;
  if (r.step) {
    j["step"] = *r.step;
    j["restarted"] = r.restarted;
  }
  // Replace, not throw, on invalid UTF-8 (a host name is the only string
  // that comes from outside).
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string ExpandPathTemplate(std::string_view path_template, int rank, std::string_view tmpdir,
                               std::string_view host) {
  std::string out(path_template);
  ReplaceAll(&out, "{rank}", std::to_string(rank));
  ReplaceAll(&out, "{tmpdir}", tmpdir);
  ReplaceAll(&out, "{host}", host);
  return out;
}

std::string TmpDirFromEnv() {
  const char* dir = std::getenv("TMPDIR");
  return (dir != nullptr && *dir != '\0') ? dir : "/tmp";
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

Result<std::unique_ptr<MetricsWriter>> MetricsWriter::Open(const std::string& path, bool append) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec)
      return Unavailable("--jsonl " + path + ": cannot create " + parent.string() + ": " +
                         ec.message());
  }
  std::FILE* file = std::fopen(path.c_str(), append ? "a" : "w");
  if (file == nullptr) return Unavailable("--jsonl " + path + ": " + std::strerror(errno));
  return std::unique_ptr<MetricsWriter>(new MetricsWriter(path, file));
}

MetricsWriter::~MetricsWriter() { std::fclose(file_); }

Status MetricsWriter::Append(const IterationRecord& record) {
  std::string line = ToJsonLine(record);
  line.push_back('\n');
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    return Unavailable("--jsonl " + path_ + ": write failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

void IterationRecord::Stamp(int64_t iteration, int64_t wall, int64_t mono_end, double time_ns,
                            double bus_factor, uint64_t wrong_elements) {
  iter = iteration;
  wall_ns = wall;
  mono_ns = mono_end;
  time_ms = time_ns / 1e6;
  algbw_gbps = AlgBandwidthGbps(bytes, time_ns);
  busbw_gbps = algbw_gbps * bus_factor;
  wrong = wrong_elements;
}

}  // namespace fdrill
