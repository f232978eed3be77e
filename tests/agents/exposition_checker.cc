// The strict exposition checker and the busy snapshot of
// tests/agents/exposition_checker.h.
#include "tests/agents/exposition_checker.h"

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fdrill::agents_test {
namespace {

bool IsMetricName(const std::string& s) {
  return std::regex_match(s, std::regex("[a-zA-Z_:][a-zA-Z0-9_:]*"));
}

// Go's strconv.ParseFloat as Prometheus uses it, minus hex and underscores.
bool IsValue(const std::string& s) {
  static const std::regex kFloat(R"([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)");
  static const std::set<std::string> kSpecial = {"NaN", "+Inf", "-Inf", "Inf"};
  return kSpecial.count(s) > 0 || std::regex_match(s, kFloat);
}

}  // namespace

std::vector<std::string> CheckExposition(const std::string& text, CheckOptions opt) {
  std::vector<std::string> bad;
  if (!text.empty() && text.back() != '\n')
    bad.push_back("the last line does not end with a newline");
  std::map<std::string, std::string> type_of;
  std::set<std::string> helped, sampled, closed, series;
  std::string current;  // the family whose samples are being read
  std::istringstream in(text);
  int n = 0;
  auto family_of = [&](const std::string& name) {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string sfx(suffix);
      if (name.size() > sfx.size() &&
          name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
        std::string base = name.substr(0, name.size() - sfx.size());
        auto t = type_of.find(base);
        if (t != type_of.end() && (t->second == "histogram" || t->second == "summary")) return base;
      }
    }
    return name;
  };
  for (std::string line; std::getline(in, line);) {
    ++n;
    const std::string at = "line " + std::to_string(n) + ": ";
    if (line.find('\r') != std::string::npos) bad.push_back(at + "carriage return");
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (line[0] == '#') {
      std::istringstream t(line.substr(1));
      std::string kw, name;
      t >> kw;
      if (kw != "HELP" && kw != "TYPE") continue;  // any other comment is ignored
      if (!(t >> name) || !IsMetricName(name)) {
        bad.push_back(at + kw + " without a valid metric name");
        continue;
      }
      if (!current.empty() && current != name) closed.insert(current);
      if (closed.count(name) > 0) bad.push_back(at + name + ": metadata after its samples ended");
      if (kw == "HELP") {
        if (!helped.insert(name).second) bad.push_back(at + "second HELP for " + name);
        std::string doc;
        std::getline(t, doc);
        for (size_t i = 0; i < doc.size(); ++i) {
          if (doc[i] == '\\' &&
              (i + 1 == doc.size() || (doc[i + 1] != '\\' && doc[i + 1] != 'n'))) {
            bad.push_back(at + "HELP escapes only \\\\ and \\n");
          }
          if (doc[i] == '\\') ++i;
        }
      } else {
        std::string type, extra;
        t >> type;
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                     "untyped"};
        if (kTypes.count(type) == 0 || (t >> extra))
          bad.push_back(at + "TYPE needs one of the five types");
        if (type_of.count(name) > 0) bad.push_back(at + "second TYPE for " + name);
        if (sampled.count(name) > 0) bad.push_back(at + "TYPE for " + name + " after its samples");
        type_of[name] = type;
      }
      current = name;
      continue;
    }
    // name [ "{" labels "}" ] value [ timestamp ]
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ' && line[i] != '\t') ++i;
    const std::string name = line.substr(0, i);
    if (!IsMetricName(name)) {
      bad.push_back(at + "bad metric name '" + name + "'");
      continue;
    }
    std::map<std::string, std::string> labels;
    bool ok = true;
    if (i < line.size() && line[i] == '{') {
      ++i;
      for (;;) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        size_t s = i;
        while (i < line.size() && (isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'))
          ++i;
        std::string lname = line.substr(s, i - s);
        if (!std::regex_match(lname, std::regex("[a-zA-Z_][a-zA-Z0-9_]*")) ||
            lname.rfind("__", 0) == 0) {
          bad.push_back(at + "bad or reserved label name '" + lname + "'");
          ok = false;
          break;
        }
        if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
          bad.push_back(at + "label " + lname + " needs =\"value\"");
          ok = false;
          break;
        }
        i += 2;
        std::string value;
        bool closed_quote = false;
        while (i < line.size()) {
          char c = line[i++];
          if (c == '"') {
            closed_quote = true;
            break;
          }
          if (c == '\\') {
            if (i >= line.size() || (line[i] != '\\' && line[i] != '"' && line[i] != 'n')) {
              bad.push_back(at + "label value escapes only \\\\, \\\" and \\n");
              ok = false;
              break;
            }
            value += line[i++];
            continue;
          }
          value += c;
        }
        if (!ok) break;
        if (!closed_quote) {
          bad.push_back(at + "unterminated label value");
          ok = false;
          break;
        }
        if (!labels.emplace(lname, value).second) {
          bad.push_back(at + "label " + lname + " twice");
          ok = false;
          break;
        }
        if (i < line.size() && line[i] == ',') {
          ++i;
          continue;
        }
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        bad.push_back(at + "expected , or } after a label");
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    std::istringstream rest(line.substr(i));
    std::string value, ts, extra;
    if (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      bad.push_back(at + "no whitespace before the value");
      continue;
    }
    if (!(rest >> value) || !IsValue(value)) {
      bad.push_back(at + "bad value '" + value + "'");
      continue;
    }
    if (rest >> ts && !std::regex_match(ts, std::regex("-?\\d+")))
      bad.push_back(at + "timestamp must be integer ms");
    if (rest >> extra) bad.push_back(at + "trailing '" + extra + "'");
    const std::string family = family_of(name);
    if (!current.empty() && current != family) closed.insert(current);
    if (closed.count(family) > 0) bad.push_back(at + family + ": samples not contiguous");
    current = family;
    sampled.insert(family);
    if (opt.require_help_and_type && (type_of.count(family) == 0 || helped.count(family) == 0)) {
      bad.push_back(at + family + " without HELP and TYPE before it");
    }
    std::string key = name + "{";
    for (const auto& [k, v] : labels) key += k + "=" + v + "\x01";
    if (!series.insert(key).second) bad.push_back(at + "duplicate series " + name);
  }
  return bad;
}

AgentMetricsSnapshot BusySnapshot() {
  AgentMetricsSnapshot s;
  s.node = "n\"1\\\n";  // every character the format escapes
  s.version = "0.1.0";
  s.faults_active = {{"link_rate", 2}, {"ib_port_flap", 0}};
  s.lease_active = true;
  s.workload_running = true;
  s.sample_age_s = 0.25;
  s.counters = {
      {"fab0.rx_bytes", 18446744073709551615ull},  // 2^64-1: must print exactly
      {"fab0.qdisc_drops", 7},
      {"tcp.retrans_segs", 324},
      {"eth0.100.tx_packets", 3},  // a VLAN: splits at the last dot
      {"ib/mlx5_0/1.symbol_error", 4},
      {"ib/mlx5_0/1.link_downed_total", 1},  // already _total: not doubled
      {"ib/mlx5_1/2.port_rcv_errors", 0},
      {"gpu0/nvlink3.crc_errors", 5},
      {"gpu1/nvlink0.crc_errors", 6},
      {"gpu1/nvlink0.replay-errors", 2},  // sanitised
      {"fab0.rx-bytes", 99},              // sanitises onto fab0.rx_bytes: dropped
      {"weird/shape", 8},
      {"nvlink_total", 1.5},
      {"fab1.note", "not a number"},
  };
  return s;
}

}  // namespace fdrill::agents_test
