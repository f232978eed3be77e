#include "agents/prometheus.h"

#include <charconv>
#include <cmath>
#include <set>
#include <vector>

namespace fdrill {

const char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

namespace {

// The text format's escapes: backslash and newline in HELP text; those and
// the double quote in a label value.
std::string Escape(std::string_view v, bool quote) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"' && quote)
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

struct Family {
  std::string help;
  const char* type;
  std::vector<std::string> samples;  // "{labels} value"
  std::set<std::string> label_sets;  // no duplicate series
};

// Families in first-use order, so the output is stable for a given input.
class Families {
 public:
  Family& Get(const std::string& name, const std::string& help, const char* type) {
    auto [it, added] = by_name_.try_emplace(name, Family{help, type, {}, {}});
    if (added) order_.push_back(name);
    return it->second;
  }
  std::string Render() const {
    std::string out;
    for (const auto& name : order_) {
      const Family& f = by_name_.at(name);
      out += "# HELP " + name + " " + Escape(f.help, /*quote=*/false) + "\n";
      out += "# TYPE " + name + " " + f.type + "\n";
      for (const auto& s : f.samples) out += name + s + "\n";
    }
    return out;
  }

 private:
  std::map<std::string, Family> by_name_;
  std::vector<std::string> order_;
};

using Labels = std::vector<std::pair<const char*, std::string>>;

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof(buf), v);  // shortest form that reads back the same
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

// JSON numbers keep their integer form: a 64-bit byte counter past 2^53
// would lose its low digits as a double.
bool JsonValue(const Json& v, std::string& out) {
  if (v.is_number_unsigned())
    out = std::to_string(v.get<uint64_t>());
  else if (v.is_number_integer())
    out = std::to_string(v.get<int64_t>());
  else if (v.is_number_float())
    out = FormatValue(v.get<double>());
  else
    return false;
  return true;
}

void Add(Family& f, const Labels& labels, const std::string& value) {
  std::string l = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) l += ",";
    l += std::string(labels[i].first) + "=\"" + EscapeLabelValue(labels[i].second) + "\"";
  }
  l += "}";
  if (!f.label_sets.insert(l).second) return;
  f.samples.push_back(l + " " + value);
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string CounterFamily(const std::string& prefix, std::string_view counter) {
  std::string name = prefix + SanitizeMetricPart(counter);
  if (name.size() < 6 || name.compare(name.size() - 6, 6, "_total") != 0) name += "_total";
  return name;
}

void AddCounter(Families& fams, const std::string& node, const std::string& key,
                const std::string& value) {
  const size_t dot = key.rfind('.');
  const std::string_view k(key);
  if (dot != std::string::npos && dot > 0 && dot + 1 < key.size()) {
    std::string_view owner = k.substr(0, dot), counter = k.substr(dot + 1);
    // "tcp.retrans_segs": the node's transport (agents/counters.h).
    if (owner == "tcp") {
      Family& f = fams.Get(CounterFamily("fdrill_tcp_", counter),
                           "The node's TCP counter " + std::string(counter) +
                               " (cumulative, /proc/net/snmp or netstat).",
                           "counter");
      Add(f, {{"node", node}}, value);
      return;
    }
    if (owner.find('/') == std::string_view::npos) {
      Family& f = fams.Get(CounterFamily("fdrill_netdev_", counter),
                           "Network interface counter " + std::string(counter) +
                               " (cumulative, kernel stats64 or qdisc).",
                           "counter");
      Add(f, {{"node", node}, {"interface", std::string(owner)}}, value);
      return;
    }
    // "ib/mlx5_0/1"
    if (owner.substr(0, 3) == "ib/") {
      std::string_view rest = owner.substr(3);
      size_t slash = rest.find('/');
      if (slash != std::string_view::npos && slash > 0 && AllDigits(rest.substr(slash + 1))) {
        Family& f = fams.Get(CounterFamily("fdrill_ib_port_", counter),
                             "InfiniBand port counter " + std::string(counter) + " (cumulative).",
                             "counter");
        Add(f,
            {{"node", node},
             {"device", std::string(rest.substr(0, slash))},
             {"port", std::string(rest.substr(slash + 1))}},
            value);
        return;
      }
    }
    // "gpu0/nvlink3"
    if (owner.substr(0, 3) == "gpu") {
      size_t slash = owner.find('/');
      std::string_view gpu = owner.substr(3, slash - 3), link = owner.substr(slash + 1);
      if (AllDigits(gpu) && link.substr(0, 6) == "nvlink" && AllDigits(link.substr(6))) {
        Family& f =
            fams.Get(CounterFamily("fdrill_nvlink_", counter),
                     "NVLink counter " + std::string(counter) + " (cumulative).", "counter");
        Add(f, {{"node", node}, {"gpu", std::string(gpu)}, {"link", std::string(link.substr(6))}},
            value);
        return;
      }
    }
  }
  Family& f =
      fams.Get("fdrill_misc_total",
               "A sampled cumulative counter whose key has no known shape, by its key.", "counter");
  Add(f, {{"node", node}, {"name", key}}, value);
}

}  // namespace

std::string EscapeLabelValue(std::string_view v) { return Escape(v, /*quote=*/true); }

std::string SanitizeMetricPart(std::string_view v) {
  std::string out;
  for (char c : v) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  return out.empty() ? "_" : out;
}

std::string RenderPrometheus(const AgentMetricsSnapshot& s) {
  Families fams;
  Add(fams.Get("fdrill_agent_info", "The fdrill agent serving these metrics; always 1.", "gauge"),
      {{"node", s.node}, {"version", s.version}}, "1");
  Family& faults =
      fams.Get("fdrill_faults_active", "Faults applied and not yet reverted, by kind.", "gauge");
  for (const auto& [kind, n] : s.faults_active)
    Add(faults, {{"node", s.node}, {"kind", kind}}, std::to_string(n));
  Add(fams.Get("fdrill_lease_active", "1 while a controller holds this agent's lease.", "gauge"),
      {{"node", s.node}}, s.lease_active ? "1" : "0");
  Add(fams.Get("fdrill_workload_running", "1 while the agent's collective workload runs.", "gauge"),
      {{"node", s.node}}, s.workload_running ? "1" : "0");
  Add(fams.Get("fdrill_journal_writable",
               "0 while the fault journal cannot be written (state directory full or read-only): "
               "faults are refused.",
               "gauge"),
      {{"node", s.node}}, s.journal_writable ? "1" : "0");
  Add(fams.Get("fdrill_audit_writable",
               "0 while the audit log cannot be written: requests are not recorded.", "gauge"),
      {{"node", s.node}}, s.audit_writable ? "1" : "0");
  Add(fams.Get("fdrill_panic_latched", "1 while `fdrill panic` is latched on this agent.", "gauge"),
      {{"node", s.node}}, s.panic_latched ? "1" : "0");
  Family& age = fams.Get("fdrill_counters_sample_age_seconds",
                         "Seconds since the counters below were sampled.", "gauge");
  if (s.sample_age_s) Add(age, {{"node", s.node}}, FormatValue(*s.sample_age_s));
  if (s.counters.is_object()) {
    // Keys already made of metric-name characters first, so one that only
    // sanitises onto the same series never displaces the real one.
    for (bool exact : {true, false}) {
      for (const auto& [key, v] : s.counters.items()) {
        const std::string_view counter = std::string_view(key).substr(key.rfind('.') + 1);
        if ((SanitizeMetricPart(counter) == counter) != exact) continue;
        std::string value;
        if (JsonValue(v, value)) AddCounter(fams, s.node, key, value);
      }
    }
  }
  return fams.Render();
}

}  // namespace fdrill
