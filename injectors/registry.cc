// The one list of injectors. Adding a fault kind = one file + one line here.
// No self-registering statics: they vanish from static libraries.
#include <algorithm>

#include "injectors/injector.h"
#include "injectors/params.h"

namespace fdrill {

const std::vector<InjectorInfo>& Injectors() {
  static const std::vector<InjectorInfo> kInjectors = {
      {"link_rate", "cap an interface's egress rate (tc tbf root qdisc)",
       "interface, rate (e.g. 100mbit), burst (default max(128K, 10ms of rate)), latency (default 50ms)",
       &MakeLinkRate},
      {"link_flap", "take an interface down for a while, then up again (ip link)",
       "interface, down (e.g. 3s), count (default 1), period (default 2 x down)", &MakeLinkFlap},
  };
  return kInjectors;
}

const InjectorInfo* FindInjector(std::string_view name) {
  const auto& all = Injectors();
  auto it = std::find_if(all.begin(), all.end(), [&](const InjectorInfo& i) { return name == i.name; });
  return it == all.end() ? nullptr : &*it;
}

Result<std::unique_ptr<Fault>> MakeFault(std::string_view kind, const Json& params, Host host) {
  const InjectorInfo* info = FindInjector(kind);
  if (!info) {
    std::set<std::string> names;
    for (const auto& i : Injectors()) names.insert(i.name);
    std::string hint = DidYouMean(std::string(kind), names);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return InvalidArgument("unknown fault kind \"" + std::string(kind) + "\"" + (hint.empty() ? "" : "; " + hint) +
                           " (known: " + list + ")");
  }
  return info->make(params, host);
}

Result<std::unique_ptr<Fault>> RestoreFault(const Json& record, Host host) {
  auto fault = MakeFault(record.value("kind", ""), record.value("params", Json::object()), host);
  if (!fault.ok()) return fault.status();
  if (auto s = (*fault)->Load(record.value("saved", Json::object())); !s.ok()) return s;
  return fault;
}

}  // namespace fdrill
