#include "harness/controller/slurm_time_left.h"

#include <charconv>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace fdrill {

namespace {

// A field of digits only, as secs2time_str prints them.
std::optional<int64_t> Number(std::string_view s) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || n < 0) return std::nullopt;
  return n;
}

// "34.4 s", "3 s": NCCL's time to error, as the plan's NCCL line words it.
std::string Secs(Duration d) {
  const double s = std::chrono::duration<double>(d).count();
  return s == std::floor(s) ? fmt::format("{:.0f} s", s) : fmt::format("{:.1f} s", s);
}

// "1-02:03:04", "2:03:04", "3:04": as squeue prints times.
std::string SlurmClock(Duration d) {
  const int64_t total = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  const int64_t days = total / 86400, h = total / 3600 % 24, m = total / 60 % 60, s = total % 60;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:{:02}", days, h, m, s);
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

}  // namespace

Result<std::optional<Duration>> ParseSlurmTime(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (text == "UNLIMITED") return std::optional<Duration>();
  const auto bad = [&] {
    return InvalidArgument("\"" + std::string(text) +
                           "\" is not a Slurm time ([days-][hours:]minutes:seconds or UNLIMITED)");
  };
  int64_t days = 0;
  std::string_view clock = text;
  if (size_t dash = text.find('-'); dash != std::string_view::npos) {
    auto d = Number(text.substr(0, dash));
    if (!d) return bad();
    days = *d;
    clock = text.substr(dash + 1);
  }
  std::vector<int64_t> parts;
  while (true) {
    const size_t colon = clock.find(':');
    auto n = Number(clock.substr(0, colon));
    if (!n) return bad();
    parts.push_back(*n);
    if (colon == std::string_view::npos) break;
    clock.remove_prefix(colon + 1);
  }
  if (parts.size() < 2 || parts.size() > 3) return bad();
  if (parts.size() == 2) parts.insert(parts.begin(), 0);  // M:SS
  const int64_t seconds = ((days * 24 + parts[0]) * 60 + parts[1]) * 60 + parts[2];
  return std::optional<Duration>(std::chrono::seconds(seconds));
}

Result<std::optional<Duration>> SlurmTimeLeft(ProcessRunner& runner, const std::string& job) {
  auto out = RunChecked(runner, {"squeue", "--noheader", "--jobs", job, "--format", "%L"});
  if (!out.ok()) return out.status();
  auto left = ParseSlurmTime(out->substr(0, out->find('\n')));
  if (!left.ok()) return left.status().Annotate("squeue %L of job " + job);
  return left;
}

std::string DescribeSchedulerKill(const NcclIbErrorTime& t, const std::string& job,
                                  const Result<std::optional<Duration>>& left,
                                  Duration drill_length) {
  const std::string who = "scheduler: Slurm job " + job;
  if (!left.ok()) {
    return who + ": its time left is unknown (" + left.status().message() +
           "); NCCL's error time is not checked against the time limit";
  }
  if (!*left) {
    return who + " has no time limit (squeue %L UNLIMITED)" +
           (t.after ? ": a dead link ends in NCCL's error, nothing kills the job first"
                    : ": a hang on a dead link lasts until someone cancels the job");
  }
  const Duration kill = **left;
  std::string out = who + " is killed in " + SlurmClock(kill) + " (its time limit, squeue %L)";
  if (!t.after) {
    out += ": a hang on a dead link lasts until then, and ends as Slurm's kill (TIMEOUT)";
  } else if (*t.after >= kill) {
    out += ", before NCCL's error after " + Secs(*t.after) +
           ": a dead link ends as Slurm's kill (TIMEOUT), not as NCCL's error";
  } else {
    out += ", after NCCL's error (" + Secs(*t.after) + ")";
  }
  if (drill_length > kill) {
    out += "; the drill (at most " + SlurmClock(drill_length) + ") is longer: Slurm ends it first";
  }
  return out;
}

}  // namespace fdrill
