#include "agents/software.h"

#include <sstream>

namespace fdrill {

const char* const kModules[11] = {"mlx5_core", "mlx5_ib",        "ib_core",     "ib_uverbs",
                                  "rdma_cm",   "nvidia_peermem", "nv_peer_mem", "nvidia",
                                  "bnxt_re",   "irdma",          "efa"};

const char* const kSysctls[12] = {"net.ipv4.tcp_congestion_control",
                                  "net.ipv4.tcp_rmem",
                                  "net.ipv4.tcp_wmem",
                                  "net.core.rmem_max",
                                  "net.core.wmem_max",
                                  "net.core.default_qdisc",
                                  "net.ipv4.tcp_ecn",
                                  "net.ipv4.tcp_sack",
                                  "net.ipv4.tcp_timestamps",
                                  "net.ipv4.tcp_mtu_probing",
                                  "vm.zone_reclaim_mode",
                                  "kernel.numa_balancing"};

namespace {

// The file's words joined by one space ("4096\t131072\t6291456\n" ->
// "4096 131072 6291456"); nullopt-like "" when unreadable or empty.
std::string Words(SysFs& sysfs, const std::string& path) {
  auto text = sysfs.Read(path);
  if (!text.ok()) return "";
  std::istringstream in(*text);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

}  // namespace

Json DiscoverSoftware(SysFs& sysfs, const SoftwarePaths& paths) {
  Json out = Json::object();
  if (std::string k = Words(sysfs, paths.proc_sys + "/kernel/osrelease"); !k.empty())
    out["kernel"] = k;
  Json modules = Json::object();
  for (const char* m : kModules) {
    const std::string dir = paths.modules + "/" + m;
    if (std::string v = Words(sysfs, dir + "/version"); !v.empty()) {
      modules[m] = v;
    } else if (std::string src = Words(sysfs, dir + "/srcversion"); !src.empty()) {
      modules[m] = "srcversion " + src;
    }
  }
  out["modules"] = std::move(modules);
  Json sysctl = Json::object();
  for (const char* name : kSysctls) {
    std::string path = name;
    for (char& c : path) c = c == '.' ? '/' : c;
    if (std::string v = Words(sysfs, paths.proc_sys + "/" + path); !v.empty()) sysctl[name] = v;
  }
  out["sysctl"] = std::move(sysctl);
  return out;
}

}  // namespace fdrill
