#include "harness/scenario/nccl_ib_timeout.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "injectors/injector.h"

namespace fdrill {

namespace {

Result<int> IntVar(const std::map<std::string, std::string>& env, const std::string& name, int lo,
                   int hi, int dflt, bool* set) {
  auto it = env.find(name);
  if (it == env.end()) return dflt;
  const std::string& v = it->second;
  int n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < lo || n > hi)
    return InvalidArgument(name + "=\"" + v + "\": NCCL takes an integer " + std::to_string(lo) +
                           ".." + std::to_string(hi));
  *set = true;
  return n;
}

void Take(std::map<std::string, std::string>& env, const std::string& item) {
  const size_t eq = item.find('=');
  if (eq == std::string::npos) return;
  const std::string name = item.substr(0, eq);
  if (name.rfind("NCCL_", 0) == 0) env[name] = item.substr(eq + 1);
}

// "34.4 s", "3 s": seconds for a person, one decimal when not whole.
std::string Secs(Duration d) {
  const double s = std::chrono::duration<double>(d).count();
  char buf[32];
  if (s == std::floor(s))
    std::snprintf(buf, sizeof(buf), "%.0f s", s);
  else
    std::snprintf(buf, sizeof(buf), "%.1f s", s);
  return buf;
}

}  // namespace

Result<NcclIbErrorTime> PredictNcclIbError(const std::map<std::string, std::string>& env) {
  NcclIbErrorTime t;
  // NCCL reads NCCL_IB_TIMEOUT into the QP's 5-bit field; 0 and >= 32
  // both mean no timeout.
  auto timeout = IntVar(env, "NCCL_IB_TIMEOUT", 0, 255, kNcclIbTimeoutDefault, &t.timeout_set);
  if (!timeout.ok()) return timeout.status();
  auto retry = IntVar(env, "NCCL_IB_RETRY_CNT", 0, 7, kNcclIbRetryCntDefault, &t.retry_set);
  if (!retry.ok()) return retry.status();
  t.timeout = *timeout;
  t.retry_cnt = *retry;
  if (t.timeout == 0 || t.timeout >= 32) return t;  // never: a hang
  const double seconds = 4.096e-6 * std::ldexp(1.0, t.timeout) * (t.retry_cnt + 1);
  t.after = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  return t;
}

std::map<std::string, std::string> JobNcclEnv(const WorkloadSpec& w, char** environ) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) Take(env, *e);
  const auto& a = w.launcher_args;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "-x" && i + 1 < a.size()) Take(env, a[i + 1]);
    if (a[i].rfind("--export=", 0) == 0) {
      const std::string list = a[i].substr(std::strlen("--export="));
      size_t start = 0;
      for (;;) {
        const size_t comma = list.find(',', start);
        Take(env,
             list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
  }
  return env;
}

std::optional<Duration> LinkDownWindow(const FaultSpec& f, const PhaseSpec& phase) {
  const InjectorInfo* info = FindInjector(f.kind);
  if (info == nullptr || info->link_down == LinkDown::kNo) return std::nullopt;
  Duration down = f.length != Duration{} ? f.length : phase.duration - f.at;
  if (info->link_down == LinkDown::kFlap && f.params.is_object() && f.params.contains("down") &&
      f.params["down"].is_string()) {
    if (auto d = ParseDuration(f.params["down"].get<std::string>()); d.ok()) down = *d;
  }
  return down;
}

std::map<std::string, std::string> PredictJobOutcomes(const NcclIbErrorTime& t, const Scenario& s) {
  std::map<std::string, std::string> out;
  if (!s.workload.Rdma()) return out;  // NCCL's IB timeout governs verbs traffic only
  for (const auto& phase : s.phases) {
    for (const auto& f : phase.faults) {
      const std::optional<Duration> down = LinkDownWindow(f, phase);
      if (!down) continue;
      out[f.id] = !t.after ? "hang" : *down < *t.after ? "rode_through" : "error";
    }
  }
  return out;
}

std::string DescribeNcclIbError(const NcclIbErrorTime& t, const Scenario& s) {
  auto source = [](bool set) { return set ? "" : " (default)"; };
  std::string out = "NCCL (NCCL_IB_TIMEOUT=" + std::to_string(t.timeout) + source(t.timeout_set) +
                    ", NCCL_IB_RETRY_CNT=" + std::to_string(t.retry_cnt) + source(t.retry_set) +
                    "): ";
  if (!t.after) {
    return out +
           "a dead IB/RoCE link never becomes an error (NCCL_IB_TIMEOUT 0 or >= 32 is infinite): "
           "a link fault that outlasts NCCL's retries hangs the job until something kills it";
  }
  out += "a dead IB/RoCE link becomes an error after 4.096 us x 2^" + std::to_string(t.timeout) +
         " x " + std::to_string(t.retry_cnt + 1) + " = " + Secs(*t.after);
  // The longest window a fault of the drill keeps a link down.
  Duration longest{0};
  std::string which;
  for (const auto& phase : s.phases) {
    for (const auto& f : phase.faults) {
      const std::optional<Duration> down = LinkDownWindow(f, phase);
      if (down && *down > longest) {
        longest = *down;
        which = f.id;
      }
    }
  }
  if (!which.empty()) {
    out += longest < *t.after ? "; fault " + which + " keeps a link down " + Secs(longest) +
                                    ", shorter: the job should ride through"
                              : "; fault " + which + " keeps a link down " + Secs(longest) +
                                    ", longer: the job should end in an error, not hang";
  }
  if (s.workload.restart.hang_timeout && *s.workload.restart.hang_timeout < *t.after) {
    out += "; restart.hang_timeout " + Secs(*s.workload.restart.hang_timeout) +
           " is shorter: the drill calls a hang before NCCL can report the error";
  }
  return out;
}

}  // namespace fdrill
