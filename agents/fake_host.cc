#include "agents/fake_host.h"

#include <nlohmann/json.hpp>

namespace fdrill {

namespace {

using Json = nlohmann::json;

ProcessResult Ok(std::string out = "") { return ProcessResult{0, std::move(out), ""}; }
ProcessResult NoDevice(const std::string& name) { return ProcessResult{1, "", "Cannot find device \"" + name + "\"\n"}; }

uint64_t Leading(const std::string& s) {
  try {
    return std::stoull(s);  // "100000000bit" -> 100000000
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

FakeHostKernel::FakeHostKernel() {
  ifaces_["lo"] = Iface{};
  ifaces_["mgmt0"] = Iface{};
  ifaces_["fab0"] = Iface{};
}

void FakeHostKernel::Record(const std::vector<std::string>& argv) {
  ++mutations_;
  recorded_.push_back(argv);
  if (recorded_.size() > kMaxRecorded) recorded_.pop_front();
}

Result<ProcessResult> FakeHostKernel::Run(const std::vector<std::string>& argv, Duration) {
  auto has = [&](size_t i, const char* s) { return argv.size() > i && argv[i] == s; };
  bool query = has(1, "-j") || has(1, "-s") || has(0, "iptables-save");
  if (!query) Record(argv);

  // ip -j link show; ip -s -j link show (the counters sample: zeros)
  if (has(0, "ip") && (has(2, "link") || has(3, "link")) && query) {
    Json out = Json::array();
    int index = 1;
    for (const auto& [name, i] : ifaces_) {
      Json flags = Json::array({"BROADCAST", "MULTICAST"});
      if (i.up) flags.push_back("UP");
      Json link = {{"ifindex", index++}, {"ifname", name}, {"flags", flags}, {"operstate", i.up ? "UP" : "DOWN"}};
      if (has(1, "-s")) {
        Json zero = {{"bytes", 0}, {"packets", 0}, {"errors", 0}, {"dropped", 0}};
        link["stats64"] = {{"rx", zero}, {"tx", zero}};
      }
      out.push_back(std::move(link));
    }
    return Ok(out.dump());
  }
  // tc -j qdisc show dev IF [root]; tc -s -j qdisc show
  if (has(0, "tc") && (has(2, "qdisc") || has(3, "qdisc")) && query) {
    Json out = Json::array();
    bool one = has(4, "dev");
    for (const auto& [name, i] : ifaces_) {
      if (one && argv.size() > 5 && argv[5] != name) continue;
      Json q = {{"kind", i.qdisc_kind}, {"handle", i.qdisc_handle}, {"root", true}, {"dev", name},
                {"drops", 0}, {"overlimits", 0}, {"options", Json::object()}};
      if (i.qdisc_kind == "tbf") q["options"] = {{"rate", i.rate_bytes}, {"burst", i.burst}};
      out.push_back(std::move(q));
    }
    if (one && out.empty()) return NoDevice(argv.size() > 5 ? argv[5] : "");
    return Ok(out.dump());
  }
  if (has(0, "tc") && query) return Ok("[]");  // class / filter show: none of ours
  if (has(0, "iptables-save")) return Ok("");
  // ip link set dev IF up|down
  if (has(0, "ip") && has(1, "link") && has(2, "set") && has(3, "dev") && argv.size() == 6) {
    auto it = ifaces_.find(argv[4]);
    if (it == ifaces_.end()) return NoDevice(argv[4]);
    it->second.up = argv[5] == "up";
    return Ok();
  }
  // tc qdisc replace dev IF root handle H KIND ... (tbf: rate Nbit burst B)
  if (has(0, "tc") && has(1, "qdisc") && has(2, "replace") && has(3, "dev") && argv.size() > 8) {
    auto it = ifaces_.find(argv[4]);
    if (it == ifaces_.end()) return NoDevice(argv[4]);
    Iface& i = it->second;
    i.qdisc_handle = argv[7];
    i.qdisc_kind = argv[8];
    i.rate_bytes = argv.size() > 10 && argv[9] == "rate" ? Leading(argv[10]) / 8 : 0;
    i.burst = argv.size() > 12 && argv[11] == "burst" ? Leading(argv[12]) : 0;
    return Ok();
  }
  if (has(0, "tc") && has(1, "qdisc") && has(2, "del") && has(3, "dev") && argv.size() > 4) {
    auto it = ifaces_.find(argv[4]);
    if (it == ifaces_.end()) return NoDevice(argv[4]);
    if (it->second.qdisc_handle == "0:") return ProcessResult{2, "", "Error: Cannot delete qdisc with handle of zero.\n"};
    it->second = Iface{it->second.up};
    return Ok();
  }
  return Ok();  // anything else: recorded, not run
}

}  // namespace fdrill
