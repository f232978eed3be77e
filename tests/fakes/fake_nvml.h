// FakeNvml: drives tests/fakes/fake_nvml.cc (a fake libnvidia-ml) from a
// test. The constructor makes a fresh state file and call log in a temp
// directory and points the environment at them and at the fake library
// (FDRILL_NVML_LIBRARY = FAKE_NVML_LIBRARY, the build's path to it), so the
// injectors load the fake exactly as they would load the driver's library.
// Set() rewrites the state file; Get() reads what the fake last wrote;
// Calls() is the call log, one "symbol arg..." per entry. One per test.
// FakeNvmlHost() is a Host whose gpus is the real Nvml (the dlopen one) on
// the fake library: what an agent's Host is on a GPU node.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/host/host.h"
#include "common/host/real_nvml.h"

namespace fdrill {

inline Host FakeNvmlHost() {
  Host host;
  host.gpus = &NvmlAt(FAKE_NVML_LIBRARY);
  return host;
}

class FakeNvml {
 public:
  FakeNvml() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fdrill-nvml-XXXXXX").string();
    dir_ = mkdtemp(pattern.data()) ? pattern : "";
    state_ = dir_ + "/state";
    log_ = dir_ + "/calls";
    setenv("FDRILL_NVML_LIBRARY", FAKE_NVML_LIBRARY, 1);
    setenv("FAKE_NVML_STATE", state_.c_str(), 1);
    setenv("FAKE_NVML_LOG", log_.c_str(), 1);
    Write({});
  }
  // The same, with a node of `gpus` GPUs as Node() makes it.
  explicit FakeNvml(int gpus) : FakeNvml() { Node(gpus); }
  ~FakeNvml() {
    unsetenv("FAKE_NVML_STATE");
    unsetenv("FAKE_NVML_LOG");
    unsetenv("FDRILL_NVML_LIBRARY");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // A node with `gpus` GPUs: SM clock 1980 MHz (max 1980), power limit
  // 700 W in [200 W, 700 W], system bandwidth mode FULL.
  void Node(int gpus) {
    std::map<std::string, std::string> s = {{"device_count", std::to_string(gpus)},
                                            {"bw_mode", "0"}};
    for (int i = 0; i < gpus; ++i) {
      std::string g = "gpu" + std::to_string(i) + ".";
      s[g + "unlocked_sm_clock"] = "1980";
      s[g + "max_sm_clock"] = "1980";
      s[g + "power_mw"] = "700000";
      s[g + "power_min_mw"] = "200000";
      s[g + "power_max_mw"] = "700000";
    }
    Write(s);
  }

  // GPU `gpu`'s inventory strings (nvmlDeviceGetName / GetUUID / GetPciInfo_v3).
  void Describe(int gpu, const std::string& name, const std::string& uuid,
                const std::string& pci_bus_id) {
    std::string g = "gpu" + std::to_string(gpu) + ".";
    Set(g + "name", name);
    Set(g + "uuid", uuid);
    Set(g + "pci_bus_id", pci_bus_id);
  }
  // NVLink `link` of GPU `gpu` exists, active or not; `remote_pci` is what it
  // reaches ("": NVML does not say).
  void NvLink(int gpu, int link, bool up, const std::string& remote_pci = "") {
    std::string l = "gpu" + std::to_string(gpu) + ".link" + std::to_string(link) + ".";
    Set(l + "state", up ? "1" : "0");
    if (!remote_pci.empty()) Set(l + "remote_pci", remote_pci);
  }
  // Field value `field` (NVML_FI_DEV_*) of that link, read by nvmlDeviceGetFieldValues.
  void NvLinkField(int gpu, int link, unsigned field, unsigned long long value) {
    Set("gpu" + std::to_string(gpu) + ".link" + std::to_string(link) + ".field" +
            std::to_string(field),
        std::to_string(value));
  }
  // NVLink error counter `counter` (NVML_NVLINK_ERROR_*) of that link.
  void NvLinkError(int gpu, int link, int counter, unsigned long long value) {
    Set("gpu" + std::to_string(gpu) + ".link" + std::to_string(link) + ".err" +
            std::to_string(counter),
        std::to_string(value));
  }

  void Set(const std::string& key, const std::string& value) {
    auto s = Read();
    s[key] = value;
    Write(s);
  }
  void Erase(const std::string& key) {
    auto s = Read();
    s.erase(key);
    Write(s);
  }
  std::string Get(const std::string& key) const {
    auto s = Read();
    auto it = s.find(key);
    return it == s.end() ? "" : it->second;
  }

  std::vector<std::string> Calls() const {
    std::vector<std::string> out;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  // The setter calls (nvml...Set... / nvml...Reset...): what changed the GPU.
  std::vector<std::string> Mutations() const {
    std::vector<std::string> out;
    for (const auto& c : Calls()) {
      std::string symbol = c.substr(0, c.find(' '));
      bool setter =
          symbol.find("Set") != std::string::npos || symbol.find("Reset") != std::string::npos;
      if (setter && symbol.find("Get") == std::string::npos) out.push_back(c);
    }
    return out;
  }
  void ClearCalls() { std::ofstream(log_, std::ios::trunc); }

 private:
  std::map<std::string, std::string> Read() const {
    std::map<std::string, std::string> s;
    std::ifstream in(state_);
    std::string key, value;
    while (in >> key && std::getline(in >> std::ws, value)) s[key] = value;
    return s;
  }
  void Write(const std::map<std::string, std::string>& s) {
    std::ofstream out(state_, std::ios::trunc);
    for (const auto& [k, v] : s) out << k << ' ' << v << '\n';
  }

  std::string dir_, state_, log_;
};

}  // namespace fdrill
