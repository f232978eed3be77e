// The JSON half of nccl_tests_output.h: nccl-tests' -J document in, fdrill
// metrics records out. nlohmann::json throws; every call that can is here,
// caught, and turned into a Status naming the origin and the key.
#include <cmath>
#include <limits>

#include "common/core/json.h"
#include "workloads/nccl_tests_output.h"

namespace fdrill {

namespace {

// src/util.cu writes doubles with "%lf", and NaN as the string "nan".
bool Number(const Json& j, double& out) {
  if (j.is_number()) {
    out = j.get<double>();
    return true;
  }
  if (j.is_string() && (j.get<std::string>() == "nan" || j.get<std::string>() == "-nan")) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  return false;
}

bool Integer(const Json& j, int64_t& out) {
  if (j.is_number_integer()) {
    out = j.get<int64_t>();
    return true;
  }
  // "%6i" as a string: the root ("    -1").
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    size_t b = s.find_first_not_of(' ');
    if (b == std::string::npos) return false;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str() + b, &end, 10);
    if (end == s.c_str() + b || *end != '\0') return false;
    out = v;
    return true;
  }
  return false;
}

std::string OpFromArgs(const Json& doc) {
  if (!doc.contains("args") || !doc["args"].is_array() || doc["args"].empty() ||
      !doc["args"][0].is_string()) {
    return "";
  }
  std::string bin = doc["args"][0].get<std::string>();
  if (auto slash = bin.rfind('/'); slash != std::string::npos) bin.erase(0, slash + 1);
  if (auto perf = bin.find("_perf"); perf != std::string::npos) bin.erase(perf);
  return bin;
}

// One placement object: {"time"|"cpu_time", "alg_bw", "bus_bw", "nwrong"}.
Status Placement(const Json& p, const std::string& where, double& time, double& alg, double& bus,
                 std::optional<int64_t>& wrong) {
  if (!p.is_object()) return InvalidArgument(where + ": expected an object or null");
  const char* time_key = p.contains("cpu_time") ? "cpu_time" : "time";
  if (!p.contains(time_key) || !Number(p[time_key], time))
    return InvalidArgument(where + ".time: expected a number");
  if (!p.contains("alg_bw") || !Number(p["alg_bw"], alg))
    return InvalidArgument(where + ".alg_bw: expected a number");
  if (!p.contains("bus_bw") || !Number(p["bus_bw"], bus))
    return InvalidArgument(where + ".bus_bw: expected a number");
  wrong.reset();
  if (p.contains("nwrong") && !p["nwrong"].is_null()) {
    double w = 0;
    if (!Number(p["nwrong"], w) || !(w >= 0) || w != std::floor(w) || w > 9.0e18) {
      return InvalidArgument(where + ".nwrong: expected a count or null");
    }
    wrong = static_cast<int64_t>(w);
  }
  return Status::Ok();
}

std::string Dtype(const std::string& nccl_tests_type) {
  if (nccl_tests_type == "float") return "float32";
  if (nccl_tests_type == "double") return "float64";
  if (nccl_tests_type == "half") return "float16";
  return nccl_tests_type;  // bfloat16, int32, int8, uint8, ... already say it
}

}  // namespace

Result<std::vector<NcclTestsRow>> ParseNcclTestsJson(const std::string& text,
                                                     const std::string& origin) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {
    return InvalidArgument(origin + ": not JSON: " + e.what());
  }
  if (!doc.is_object()) return InvalidArgument(origin + ": expected a JSON object");
  if (doc.contains("version") && doc["version"] != 1) {
    return Unsupported(origin + ": nccl-tests JSON version " + DumpJson(doc["version"]) +
                       " (this reads version 1)");
  }
  if (!doc.contains("results") || !doc["results"].is_array())
    return InvalidArgument(origin + ": no \"results\" array");
  const std::string op = OpFromArgs(doc);
  int nranks = 0;
  if (doc.contains("config") && doc["config"].is_object() && doc["config"].contains("devices") &&
      doc["config"]["devices"].is_array()) {
    nranks = static_cast<int>(doc["config"]["devices"].size());
  }
  std::vector<NcclTestsRow> rows;
  const Json& results = doc["results"];
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string where = origin + ": results[" + std::to_string(i) + "]";
    const Json& r = results[i];
    if (!r.is_object()) return InvalidArgument(where + ": expected an object");
    NcclTestsRow row;
    row.op = op;
    row.nranks = nranks;
    int64_t root = -1;
    if (!r.contains("size") || !Integer(r["size"], row.size_bytes))
      return InvalidArgument(where + ".size: expected an integer");
    if (!r.contains("count") || !Integer(r["count"], row.count))
      return InvalidArgument(where + ".count: expected an integer");
    if (!r.contains("type") || !r["type"].is_string())
      return InvalidArgument(where + ".type: expected a string");
    row.type = r["type"].get<std::string>();
    if (r.contains("redop") && r["redop"].is_string()) row.redop = r["redop"].get<std::string>();
    if (r.contains("root") && !Integer(r["root"], root))
      return InvalidArgument(where + ".root: expected an integer");
    row.root = static_cast<int>(root);
    row.has_oop = r.contains("out_of_place") && !r["out_of_place"].is_null();
    row.has_ip = r.contains("in_place") && !r["in_place"].is_null();
    if (!row.has_oop && !row.has_ip)
      return InvalidArgument(where + ": neither out_of_place nor in_place");
    if (row.has_oop) {
      Status s = Placement(r["out_of_place"], where + ".out_of_place", row.oop_time_us,
                           row.oop_algbw_gbps, row.oop_busbw_gbps, row.oop_wrong);
      if (!s.ok()) return s;
    }
    if (row.has_ip) {
      Status s = Placement(r["in_place"], where + ".in_place", row.ip_time_us, row.ip_algbw_gbps,
                           row.ip_busbw_gbps, row.ip_wrong);
      if (!s.ok()) return s;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Json ToMetricsRecord(const NcclTestsRow& row, int64_t iter, int64_t wall_ns, bool in_place) {
  const double time_us = in_place ? row.ip_time_us : row.oop_time_us;
  const auto& wrong = in_place ? row.ip_wrong : row.oop_wrong;
  const auto& max_error = in_place ? row.ip_max_error : row.oop_max_error;
  Json j = {
      {"source", "nccl-tests"},
      {"rank", 0},
      {"iter", iter},
      {"op", row.op},
      {"dtype", Dtype(row.type)},
      {"redop", row.redop.empty() ? "none" : row.redop},
      {"bytes", row.size_bytes},
      {"count", row.count},
      {"wall_ns", wall_ns},
      {"time_ms", time_us / 1000.0},
      {"algbw_gbps", in_place ? row.ip_algbw_gbps : row.oop_algbw_gbps},
      {"busbw_gbps", in_place ? row.ip_busbw_gbps : row.oop_busbw_gbps},
      {"wrong", wrong.value_or(0)},
      {"in_place", in_place},
  };
  if (row.nranks > 0) j["nranks"] = row.nranks;
  if (!wrong) j["data_checked"] = false;
  if (max_error) j["max_error"] = *max_error;
  return j;
}

}  // namespace fdrill
