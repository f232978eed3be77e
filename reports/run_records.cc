// A line of events.jsonl or metrics.jsonl, or plan.json, read into its
// struct (run_dir.h declares these). Strict: a line that is not JSON, or
// lacks a key the reports need, or has it with the wrong type, is an error
// naming "file:line" and the key. With run_dir.cc the only files of
// reports/ that parse JSON; nlohmann's exceptions stop here.
#include <optional>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/core/json.h"
#include "reports/run_dir.h"

namespace fdrill {

namespace {

using nlohmann::json;

enum class Need { kRequired, kOptional };

// Reads keys of one JSON object into C++ values. The first problem is kept,
// naming the place and the key; later reads are skipped once one failed.
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const Status& status() const { return status_; }

  void Fail(const char* key, const char* what) {
    if (!status_.ok()) return;  // the first problem is the one to fix
    status_ = InvalidArgument(fmt::format("{}: key \"{}\" {}", where_, key, what));
  }

  void String(const char* key, Need need, std::string* out) {
    if (const json* v = Find(key, need); v != nullptr) {
      if (!v->is_string()) return Fail(key, "is not a string");
      *out = v->get<std::string>();
    }
  }

  template <typename Int>
  void Integer(const char* key, Need need, Int* out) {
    if (const json* v = Find(key, need); v != nullptr) {
      if (!v->is_number_integer()) return Fail(key, "is not an integer");
      *out = v->get<Int>();
    }
  }

  void Number(const char* key, Need need, double* out) {
    if (const json* v = Find(key, need); v != nullptr) {
      if (!v->is_number()) return Fail(key, "is not a number");
      *out = v->get<double>();
    }
  }

  // Absent or null leaves *out empty.
  template <typename T>
  void Optional(const char* key, std::optional<T>* out) {
    const json* v = Find(key, Need::kOptional);
    if (v == nullptr) return;
    if constexpr (std::is_same_v<T, bool>) {
      if (!v->is_boolean()) return Fail(key, "is not true, false or null");
    } else if constexpr (std::is_integral_v<T>) {
      if (!v->is_number_integer()) return Fail(key, "is not an integer or null");
    } else {
      if (!v->is_number()) return Fail(key, "is not a number or null");
    }
    *out = v->get<T>();
  }

  // A value that may be a string or any JSON (a target, a residue before/after).
  std::string Text(const char* key) {
    const json* v = Find(key, Need::kOptional);
    if (v == nullptr) return "";
    if (v->is_string()) return v->get<std::string>();
    return DumpJson(*v);
  }

  // A list of strings (an absent or null one: empty).
  void Strings(const char* key, Need need, std::vector<std::string>* out) {
    const json* v = Find(key, need);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(key, "is not a list");
    for (const json& item : *v) {
      if (!item.is_string()) return Fail(key, "holds an item that is not a string");
      out->push_back(item.get<std::string>());
    }
  }

  // The value of `key`, or nullptr when it is absent or null (an error when
  // required) or when an earlier read failed.
  const json* Find(const char* key, Need need) {
    if (!status_.ok()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
      if (need == Need::kRequired) Fail(key, "is missing");
      return nullptr;
    }
    return &*it;
  }

 private:
  const json& object_;
  std::string where_;
  Status status_;
};

Result<json> ParseObject(std::string_view text, std::string_view where) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return InvalidArgument(fmt::format("{}: not valid JSON: {}", where, e.what()));
  }
  if (!j.is_object()) return InvalidArgument(fmt::format("{}: not a JSON object", where));
  return j;
}

// The `items` of a residue event; `fields` reads the event itself.
Status ReadResidueItems(Fields& fields, std::string_view where, std::vector<ResidueItem>* out) {
  const json* items = fields.Find("items", Need::kRequired);
  if (items != nullptr && !items->is_array()) fields.Fail("items", "is not a list");
  if (items == nullptr || !fields.status().ok()) return fields.status();
  for (size_t i = 0; i < items->size(); ++i) {
    const json& item = (*items)[i];
    std::string item_where = fmt::format("{}: items[{}]", where, i);
    if (!item.is_object()) return InvalidArgument(item_where + ": not an object");
    Fields f(item, item_where);
    ResidueItem r;
    f.String("node", Need::kOptional, &r.node);
    f.String("object", Need::kRequired, &r.object);
    r.before = f.Text("before");
    r.after = f.Text("after");
    if (!f.status().ok()) return f.status();
    out->push_back(std::move(r));
  }
  return Status::Ok();
}

// TEXT as one JSON object (WHERE names it in errors) read into a T by
// READ(fields, where, out): READ's own error first, else the first field's.
template <typename T, typename Read>
Result<T> ParseObjectInto(std::string_view text, std::string_view where, Read read) {
  Result<json> parsed = ParseObject(text, where);
  if (!parsed.ok()) return parsed.status();
  Fields f(*parsed, std::string(where));
  T out;
  if (Status s = read(f, where, out); !s.ok()) return s;
  if (!f.status().ok()) return f.status();
  return out;
}

// KEY (expectations.metrics, expectations.workloads.NAME.metrics): a list of
// {metric, fault, phase, max, min}, each with a metric name.
Status ReadMetricExpectations(const json& ms, const std::string& key, std::string_view where,
                              std::vector<MetricExpectation>* out) {
  if (!ms.is_array()) return InvalidArgument(fmt::format("{}: {} is not a list", where, key));
  for (const json& m : ms) {
    if (!m.is_object() || !m.contains("metric") || !m["metric"].is_string()) {
      return InvalidArgument(
          fmt::format("{}: {} holds an entry without a metric name", where, key));
    }
    Fields mf(m, fmt::format("{}: {}", where, key));
    MetricExpectation me;
    mf.String("metric", Need::kRequired, &me.metric);
    mf.String("fault", Need::kOptional, &me.fault);
    mf.String("phase", Need::kOptional, &me.phase);
    mf.Optional("max", &me.max);
    mf.Optional("min", &me.min);
    if (!mf.status().ok()) return mf.status();
    out->push_back(std::move(me));
  }
  return Status::Ok();
}

// expectations.workloads: {NAME: {max_slowdown, max_time_to_recover_s, metrics}}.
Status ReadWorkloadExpectations(const json& ws, std::string_view where, Expectations* x) {
  if (!ws.is_object()) {
    return InvalidArgument(fmt::format("{}: expectations.workloads is not an object", where));
  }
  for (const auto& [name, w] : ws.items()) {
    if (!w.is_object()) {
      return InvalidArgument(
          fmt::format("{}: expectations.workloads.{} is not an object", where, name));
    }
    Fields wf(w, fmt::format("{}: expectations.workloads.{}", where, name));
    WorkloadExpectations we;
    we.name = name;
    wf.Optional("max_slowdown", &we.max_slowdown);
    wf.Optional("max_time_to_recover_s", &we.max_time_to_recover_s);
    if (!wf.status().ok()) return wf.status();
    if (w.contains("metrics")) {
      const std::string key = "expectations.workloads." + name + ".metrics";
      if (auto st = ReadMetricExpectations(w["metrics"], key, where, &we.metrics); !st.ok())
        return st;
    }
    x->workloads.push_back(std::move(we));
  }
  return Status::Ok();
}

Status ReadPlan(Fields& f, std::string_view where, Plan& plan) {
  f.String("name", Need::kOptional, &plan.name);
  f.Integer("ranks", Need::kOptional, &plan.ranks);
  f.Integer("recovery_window_iters", Need::kOptional, &plan.recovery_window_iters);
  f.String("rate_unit", Need::kOptional, &plan.rate_unit);
  if (plan.rate_unit != "GB/s" && plan.rate_unit != "steps/s")
    f.Fail("rate_unit", "must be \"GB/s\" or \"steps/s\"");
  if (plan.recovery_window_iters < 1) f.Fail("recovery_window_iters", "must be at least 1");
  if (const json* nodes = f.Find("nodes", Need::kOptional); nodes != nullptr) {
    if (!nodes->is_array()) f.Fail("nodes", "is not a list");
    for (const json& n : nodes->is_array() ? *nodes : json::array()) {
      if (!n.is_string()) {
        f.Fail("nodes", "holds an entry that is not a string");
        break;
      }
      plan.nodes.push_back(n.get<std::string>());
    }
  }
  if (const json* e = f.Find("expectations", Need::kOptional); e != nullptr) {
    if (!e->is_object()) {
      f.Fail("expectations", "is not an object");
    } else {
      Fields ef(*e, fmt::format("{}: expectations", where));
      Expectations& x = plan.expectations;
      ef.Optional("max_slowdown", &x.max_slowdown);
      ef.Optional("max_time_to_recover_s", &x.max_time_to_recover_s);
      ef.Optional("no_residue", &x.no_residue);
      ef.Optional("data_intact", &x.data_intact);
      std::string job;
      ef.String("job", Need::kOptional, &job);
      if (!job.empty()) x.job = job;
      if (!ef.status().ok()) return ef.status();
      if (e->contains("metrics")) {
        if (auto st =
                ReadMetricExpectations((*e)["metrics"], "expectations.metrics", where, &x.metrics);
            !st.ok())
          return st;
      }
      if (e->contains("workloads")) {
        if (auto st = ReadWorkloadExpectations((*e)["workloads"], where, &x); !st.ok()) return st;
      }
    }
  }
  if (const json* p = f.Find("predicted_job", Need::kOptional); p != nullptr) {
    if (!p->is_object())
      return InvalidArgument(fmt::format("{}: predicted_job is not an object", where));
    for (const auto& [id, outcome] : p->items()) {
      if (!outcome.is_string()) {
        return InvalidArgument(fmt::format("{}: predicted_job.{} is not a string", where, id));
      }
      plan.predicted_job[id] = outcome.get<std::string>();
    }
  }
  if (const json* ws = f.Find("workloads", Need::kOptional); ws != nullptr) {
    if (!ws->is_array()) return InvalidArgument(fmt::format("{}: workloads is not a list", where));
    for (const json& w : *ws) {
      if (!w.is_object()) {
        return InvalidArgument(
            fmt::format("{}: workloads holds an entry that is not an object", where));
      }
      Fields wf(w, fmt::format("{}: workloads", where));
      PlanWorkload pw;
      wf.String("name", Need::kRequired, &pw.name);
      wf.Integer("ranks", Need::kRequired, &pw.ranks);
      wf.String("start", Need::kOptional, &pw.start);
      if (!wf.status().ok()) return wf.status();
      if (w.contains("nodes") && w["nodes"].is_array()) {
        for (const json& n : w["nodes"]) {
          if (n.is_string()) pw.nodes.push_back(n.get<std::string>());
        }
      }
      plan.workloads.push_back(std::move(pw));
    }
  }
  return Status::Ok();
}

Status ReadEvent(Fields& f, std::string_view where, Event& e) {
  f.Number("t", Need::kRequired, &e.t);
  f.String("type", Need::kRequired, &e.type);
  f.String("node", Need::kOptional, &e.node);
  const std::string& type = e.type;
  if (type == "drill_start") {
    f.String("name", Need::kOptional, &e.name);
  } else if (type == "phase_start" || type == "phase_end") {
    f.String("phase", Need::kRequired, &e.phase);
  } else if (type.starts_with("fault_")) {
    f.String("id", Need::kRequired, &e.id);
    f.String("kind", Need::kOptional, &e.kind);
    e.target = f.Text("target");
    f.String("scope", Need::kOptional, &e.scope);
    f.Optional("verified", &e.verified);
  } else if (type == "culprit") {
    f.String("id", Need::kRequired, &e.id);
    f.String("node", Need::kRequired, &e.node);
    f.String("element", Need::kRequired, &e.element);
    f.String("link", Need::kOptional, &e.link);
  } else if (type == "workload_start") {
    f.Optional("attempt", &e.attempt);
  } else if (type == "workload_exit") {
    f.Optional("exit_code", &e.exit_code);
    if (!e.exit_code) f.Fail("exit_code", "is missing");
    f.Optional("forced", &e.forced);
  } else if (type == "workload_restart") {
    f.Optional("iterations_lost", &e.iterations_lost);
    f.Optional("resumed_step", &e.resumed_step);
  } else if (type == "workload_failed") {
    f.String("reason", Need::kRequired, &e.reason);
    f.String("cause", Need::kOptional, &e.cause);
    f.Optional("exit_code", &e.exit_code);
  } else if (type == "digest_check") {
    f.Optional("steps", &e.steps);
    f.String("digest", Need::kOptional, &e.digest);
    f.String("expected", Need::kOptional, &e.expected);
    f.String("key", Need::kOptional, &e.digest_key);
    f.Optional("tolerance", &e.tolerance);
  } else if (type == "residue") {
    if (Status s = ReadResidueItems(f, where, &e.items); !s.ok()) return s;
  } else if (type == "counters") {
    f.String("node", Need::kRequired, &e.node);
    const json* c = f.Find("counters", Need::kRequired);
    if (c != nullptr && !c->is_object()) {
      f.Fail("counters", "is not an object");
    } else if (c != nullptr) {
      for (auto it = c->begin(); it != c->end(); ++it) {
        if (!it.value().is_number()) {
          f.Fail("counters", "holds a value that is not a number");
          break;
        }
        e.counters.emplace_back(it.key(), it.value().get<double>());
      }
    }
    f.Optional("delta", &e.counters_delta);
  } else if (type == "agent_lost") {
    f.String("node", Need::kRequired, &e.node);
    f.String("reason", Need::kOptional, &e.reason);
    f.Strings("faults_left", Need::kRequired, &e.ids);
    f.Optional("wall_ns", &e.wall_ns);
  } else if (type == "agent_reconnected") {
    f.String("node", Need::kRequired, &e.node);
    f.Optional("wall_ns", &e.wall_ns);
  } else if (type == "faults_swept") {
    f.String("node", Need::kRequired, &e.node);
    f.Strings("ids", Need::kRequired, &e.ids);
    f.Optional("at_s", &e.at_s);
    f.Optional("wall_ns", &e.wall_ns);
  } else if (type == "slurm_node") {
    f.String("node", Need::kRequired, &e.node);
    f.String("state", Need::kRequired, &e.state);
    f.String("reason", Need::kOptional, &e.reason);
  } else if (type == "ras") {
    f.String("node", Need::kRequired, &e.node);
    f.Optional("answered", &e.answered);
    if (!e.answered) f.Fail("answered", "is missing");
    f.Optional("wall_ns", &e.wall_ns);
    f.String("ras_error", Need::kOptional, &e.message);
    const json* st = f.Find("ras_status", Need::kOptional);
    if (st != nullptr && !st->is_object()) {
      f.Fail("ras_status", "is not an object");
    } else if (st != nullptr) {
      Fields status(*st, fmt::format("{}: ras_status", where));
      status.Optional("missing", &e.ras_missing);
      status.Optional("dead", &e.ras_dead);
      if (!status.status().ok()) return status.status();
    }
  } else if (type == "ib_watch") {
    f.String("node", Need::kRequired, &e.node);
    f.String("ib_error", Need::kOptional, &e.message);
    const json* devices = f.Find("devices", Need::kOptional);
    if (devices != nullptr && !devices->is_array()) {
      f.Fail("devices", "is not an array");
    } else if (devices != nullptr) {
      e.ib_devices = static_cast<int64_t>(devices->size());
    }
  } else if (type == "ib_async") {
    f.String("node", Need::kRequired, &e.node);
    f.String("device", Need::kRequired, &e.device);
    f.Optional("port", &e.port);
    f.String("event", Need::kRequired, &e.ib_event);
    f.Optional("wall_ns", &e.wall_ns);
  } else if (type == "slurm_job") {
    f.String("job", Need::kRequired, &e.job);
    f.String("state", Need::kRequired, &e.state);
  } else if (type == "error") {
    f.String("message", Need::kRequired, &e.message);
  } else if (type == "abort") {
    f.String("reason", Need::kRequired, &e.reason);
    f.String("cause", Need::kOptional, &e.cause);
  } else if (type == "drill_end") {
    f.String("status", Need::kRequired, &e.status);
    if (f.status().ok() && e.status != "completed" && e.status != "aborted" &&
        e.status != "error") {
      f.Fail("status", "is not completed, aborted or error");
    }
  }
  return Status::Ok();
}

Status ReadMetric(Fields& f, std::string_view, MetricRecord& m) {
  f.Integer("rank", Need::kRequired, &m.rank);
  f.Integer("nranks", Need::kOptional, &m.nranks);
  f.String("host", Need::kOptional, &m.node);  // "node", when present, wins
  f.String("node", Need::kOptional, &m.node);
  f.Integer("iter", Need::kRequired, &m.iter);
  f.Integer("attempt", Need::kOptional, &m.attempt);
  f.String("op", Need::kOptional, &m.op);
  f.String("workload", Need::kOptional, &m.workload);
  f.Integer("bytes", Need::kRequired, &m.bytes);
  f.Number("time_ms", Need::kRequired, &m.time_ms);
  f.Number("algbw_gbps", Need::kOptional, &m.algbw_gbps);
  f.Number("busbw_gbps", Need::kOptional, &m.busbw_gbps);
  f.Number("wait_ms", Need::kOptional, &m.wait_ms);
  f.Integer("wrong", Need::kRequired, &m.wrong);
  f.Number("t", Need::kRequired, &m.t);
  if (f.status().ok() && !(m.time_ms > 0)) f.Fail("time_ms", "must be greater than 0");
  if (f.status().ok() && !(m.wait_ms >= 0)) f.Fail("wait_ms", "must not be negative");
  return Status::Ok();
}
}  // namespace

Result<Plan> ParsePlan(std::string_view text, std::string_view where) {
  return ParseObjectInto<Plan>(text, where, ReadPlan);
}

Result<Event> ParseEventLine(std::string_view line, std::string_view where) {
  return ParseObjectInto<Event>(line, where, ReadEvent);
}

Result<MetricRecord> ParseMetricLine(std::string_view line, std::string_view where) {
  return ParseObjectInto<MetricRecord>(line, where, ReadMetric);
}

}  // namespace fdrill
