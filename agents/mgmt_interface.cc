#include "agents/mgmt_interface.h"

#include "common/core/json.h"
#include "common/wire/wire.h"

namespace fdrill {

Result<std::string> InterfaceOwningAddress(ProcessRunner& runner, const std::string& address) {
  if (address == "0.0.0.0" || address.rfind("127.", 0) == 0) return std::string("lo");
  auto out = RunChecked(runner, {"ip", "-j", "addr", "show"});
  if (!out.ok()) return out.status();
  Json links = ParseOutsideJson(*out);
  if (!links.is_array()) return Internal("`ip -j addr show` printed no JSON array");
  for (const auto& link : links) {
    for (const auto& a : link.value("addr_info", Json::array())) {
      if (a.value("local", "") == address) return link.value("ifname", std::string());
    }
  }
  return NotFound("no interface here holds " + address);
}

}  // namespace fdrill
