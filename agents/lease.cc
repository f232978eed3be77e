#include "agents/lease.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/core/units.h"

namespace fdrill {

namespace {

Result<std::optional<std::set<std::string>>> StringSet(const Json& j, const char* key) {
  std::set<std::string> out;
  if (!j.contains(key)) return std::optional<std::set<std::string>>();
  const Json& v = j[key];
  if (!v.is_array())
    return InvalidArgument(std::string("lease limits: \"") + key + "\" must be a list of strings");
  for (const Json& item : v) {
    if (!item.is_string())
      return InvalidArgument(std::string("lease limits: \"") + key +
                             "\" must be a list of strings");
    out.insert(item.get<std::string>());
  }
  return std::optional<std::set<std::string>>(std::move(out));
}

}  // namespace

Result<LeaseLimits> LeaseLimits::FromJson(const Json& j) {
  LeaseLimits out;
  if (j.is_null()) return out;
  if (!j.is_object()) return InvalidArgument("lease: \"limits\" must be an object");
  auto kinds = StringSet(j, "kinds");
  if (!kinds.ok()) return kinds.status();
  auto targets = StringSet(j, "targets");
  if (!targets.ok()) return targets.status();
  out.kinds = std::move(*kinds);
  out.targets = std::move(*targets);
  for (const char* key : {"max_faults", "max_duration_ms"}) {
    if (!j.contains(key)) continue;
    const Json& v = j[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      return InvalidArgument(std::string("lease limits: \"") + key +
                             "\" must be a whole number, 0 or more");
  }
  if (j.contains("max_faults")) {
    const int64_t max_faults = j["max_faults"].get<int64_t>();
    if (max_faults > 1000000) return InvalidArgument("lease limits: \"max_faults\" above 1000000");
    out.max_faults = static_cast<int>(max_faults);
  }
  out.max_duration_ms = j.value("max_duration_ms", int64_t{0});
  return out;
}

Json LeaseLimits::ToJson() const {
  Json j = Json::object();
  if (kinds) j["kinds"] = *kinds;
  if (targets) j["targets"] = *targets;
  if (max_faults) j["max_faults"] = *max_faults;
  if (max_duration_ms > 0) j["max_duration_ms"] = max_duration_ms;
  return j;
}

Status LeaseLimits::Admit(const std::string& kind, const std::string& target, size_t active) const {
  if (kinds && !kinds->count(kind)) {
    return PermissionDenied(
        kinds->empty() ? kind + " refused: the drill's lease puts no fault on this node"
                       : fmt::format("{} refused: the drill's lease allows only {} on this node",
                                     kind, fmt::join(*kinds, ", ")));
  }
  if (targets && !targets->count(target)) {
    return PermissionDenied(fmt::format("{} {} refused: the drill's lease allows only targets {}",
                                        kind, target, fmt::join(*targets, ", ")));
  }
  if (max_faults && active >= static_cast<size_t>(*max_faults)) {
    return PermissionDenied(fmt::format(
        "{} {} refused: {} fault(s) already in force, the drill's lease allows {} at once", kind,
        target, active, *max_faults));
  }
  return Status::Ok();
}

std::string Lease::Holder(Clock::TimePoint now, int64_t wall_now_ns) const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now);
  return fmt::format("held by {} for drill {} until {} ({} from now)",
                     owner_.empty() ? "(no certificate: --insecure)" : owner_, drill_,
                     FormatUtcSeconds(wall_now_ns + left.count() * 1000000), FormatDuration(left));
}

Status Lease::Take(const std::string& owner, const std::string& drill, Duration ttl,
                   const LeaseLimits& limits, Clock::TimePoint now, int64_t wall_now_ns) {
  const bool live = held_ && now <= deadline_;
  if (live && (owner != owner_ || drill != drill_)) {
    return PermissionDenied("this node is " + Holder(now, wall_now_ns) +
                            "; wait for that drill to end, or stop it (`fdrill panic`)");
  }
  if (live && limits.ToJson() != limits_.ToJson()) {
    return InvalidArgument(
        "lease renewal changes the drill's limits; they are fixed for the drill");
  }
  held_ = true;
  owner_ = owner;
  drill_ = drill;
  deadline_ = now + ttl;
  limits_ = limits;
  return Status::Ok();
}

Status Lease::Release(const std::string& owner, const std::string& drill) {
  if (!held_) return Status::Ok();
  if (owner != owner_ || drill != drill_) {
    return PermissionDenied("release refused: the lease belongs to " +
                            (owner_.empty() ? std::string("(no certificate)") : owner_) +
                            " for drill " + drill_);
  }
  held_ = false;
  return Status::Ok();
}

Status Lease::Check(const std::string& owner, const std::string& drill, const std::string& type,
                    Clock::TimePoint now, int64_t wall_now_ns) const {
  if (!held_ || now > deadline_) {
    return PermissionDenied("\"" + type +
                            "\" refused: no drill holds this node's lease; a controller takes "
                            "one (\"lease\") before it changes anything");
  }
  if (owner != owner_ || drill != drill_) {
    return PermissionDenied("\"" + type + "\" refused: this node is " + Holder(now, wall_now_ns));
  }
  return Status::Ok();
}

Status Lease::CheckNotOthers(const std::string& owner, const std::string& drill,
                             const std::string& type, Clock::TimePoint now,
                             int64_t wall_now_ns) const {
  if (!held_ || now > deadline_) return Status::Ok();
  return Check(owner, drill, type, now, wall_now_ns);
}

}  // namespace fdrill
