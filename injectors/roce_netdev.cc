#include "injectors/roce_netdev.h"

#include <cstdio>

#include "common/core/json.h"
#include "injectors/rdma_reach.h"

namespace fdrill {

namespace {

constexpr auto kDcbTimeout = std::chrono::seconds(5);

std::string WithoutTrailingNewlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Result<Json> DcbShow(ProcessRunner& runner, const std::string& object, const std::string& ifname,
                     const std::string& who) {
  const std::vector<std::string> argv = {"dcb", "-j", object, "show", "dev", ifname};
  auto r = runner.Run(argv, kDcbTimeout);
  if (!r.ok()) return r.status().Annotate(who);
  const std::string err = WithoutTrailingNewlines(r->err);
  if (r->exit_code != 0) {
    const std::string said = "`" + JoinArgv(argv) + "`: " + err;
    if (err.find("No such device") != std::string::npos)
      return NotFound(who + ": no interface \"" + ifname + "\" here (" + said + ")");
    if (err.find("Operation not supported") != std::string::npos)
      return Unsupported(who + ": " + ifname + " has no DCB support in its driver (" + said + ")");
    if (err.find("Attribute not found") != std::string::npos)
      return Unsupported(who + ": the driver of " + ifname + " has no DCB " + object + " (" + said +
                         ")");
    return FailedPrecondition(who + ": `" + JoinArgv(argv) + "` exited " +
                              std::to_string(r->exit_code) + ": " + err);
  }
  Json j = ParseOutsideJson(r->out);
  if (j.is_discarded() || !j.is_object())
    return Internal(who + ": `" + JoinArgv(argv) + "` printed no JSON object");
  return j;
}

Result<DcbRateUnits> ReadDcbRateUnits(ProcessRunner& runner, const std::string& who) {
  auto out = RunChecked(runner, {"dcb", "-V"});
  if (!out.ok()) return out.status().Annotate(who);
  // "dcb utility, iproute2-6.1.0"; a git build adds "-12-gabcdef".
  const size_t at = out->find("iproute2-");
  unsigned major = 0, minor = 0;
  if (at == std::string::npos ||
      std::sscanf(out->c_str() + at, "iproute2-%u.%u", &major, &minor) != 2) {
    return Internal(who + ": cannot read iproute2's version from `dcb -V`: \"" +
                    WithoutTrailingNewlines(*out) +
                    "\"; it decides the unit of dcb's tc-maxrate (fixed in 6.18)");
  }
  const bool fixed = major > 6 || (major == 6 && minor >= 18);
  return fixed ? DcbRateUnits::kConverted : DcbRateUnits::kBytesAsKbit;
}

std::string DcbRateArg(uint64_t kbps, DcbRateUnits units) {
  // dcb reads "Nbit" as N/8 bytes/s (get_rate64), exactly for these sizes.
  // < 6.18 writes those bytes/s as kbit/s: N = 8 * kbps. From 6.18 it divides
  // the bytes/s by 125: N = 1000 * kbps.
  const uint64_t bits = units == DcbRateUnits::kBytesAsKbit ? kbps * 8 : kbps * 1000;
  return std::to_string(bits) + "bit";
}

uint64_t DcbJsonRateToKbps(uint64_t value, DcbRateUnits units) {
  // < 6.18 prints the kernel's kbit/s as is; from 6.18 kbit/s * 125 (bytes/s).
  return units == DcbRateUnits::kBytesAsKbit ? value : value / 125;
}

std::string NetdevWithRdmaPort(SysFs* sysfs, const std::string& ifname) {
  if (sysfs == nullptr) return ifname;
  auto port = RdmaPortBehind(*sysfs, ifname);
  if (!port.ok() || !port->has_value()) return ifname;
  const RdmaPort& p = **port;
  return ifname + " (" + p.device + "/" + std::to_string(p.port) + " " +
         (p.Roce() ? "RoCE" : "InfiniBand") + ")";
}

Status ProbeNetdevInSysfs(SysFs* sysfs, const Json& params, const std::string& who) {
  if (sysfs == nullptr || !params.is_object() || !params.contains("interface") ||
      !params["interface"].is_string())
    return Status::Ok();
  const std::string ifname = params["interface"].get<std::string>();
  if (sysfs->Exists("/sys/class/net/" + ifname)) return Status::Ok();
  return NotFound(who + ": no interface \"" + ifname + "\" here (no /sys/class/net/" + ifname +
                  ")");
}

Status ProbeToolVersion(ProcessRunner& runner, const std::vector<std::string>& argv,
                        const std::string& package, const std::string& who) {
  auto r = runner.Run(argv, kDcbTimeout);
  if (!r.ok()) {
    if (IsProgramMissing(r.status()))
      return Unsupported(who + " needs " + argv[0] + " (" + package + "): " + r.status().message());
    return r.status().Annotate(who);
  }
  if (r->exit_code != 0)
    return Unsupported(who + ": `" + JoinArgv(argv) + "` exited " + std::to_string(r->exit_code));
  return Status::Ok();
}

}  // namespace fdrill
