// RealVerbs against this machine's libibverbs. Where the kernel has no RDMA
// (ibv_get_device_list fails with ENOSYS) or no device is present, both
// calls succeed with no devices; where devices are present, they are the
// ones sysfs lists.
#include "common/host/real_verbs.h"

#include <chrono>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

std::set<std::string> SysfsDevices() {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/class/infiniband", ec))
    names.insert(e.path().filename().string());
  return names;
}

TEST(RealVerbs, ListsTheDevicesSysfsHasAndNoneWithoutRdma) {
  RealVerbs verbs;
  auto devices = verbs.ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  std::set<std::string> names;
  for (const VerbsDevice& d : *devices) {
    names.insert(d.name);
    EXPECT_FALSE(d.ports.empty()) << d.name;
    for (const VerbsPort& p : d.ports) {
      EXPECT_TRUE(p.link_layer == "InfiniBand" || p.link_layer == "Ethernet") << p.link_layer;
      EXPECT_FALSE(p.state.empty());
    }
  }
  EXPECT_EQ(names, SysfsDevices());
}

TEST(RealVerbs, OpensEveryDeviceForEventsAndPollKeepsItsDeadline) {
  RealVerbs verbs;
  auto source = verbs.OpenEvents();
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const std::vector<std::string> listened = (*source)->Devices();
  EXPECT_EQ(std::set<std::string>(listened.begin(), listened.end()), SysfsDevices());
  const auto start = std::chrono::steady_clock::now();
  auto events = (*source)->Poll(std::chrono::milliseconds(100));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_LT(took, std::chrono::seconds(2)) << "Poll waited past its deadline";
  if (listened.empty()) {
    EXPECT_TRUE(events->empty());
    EXPECT_GE(took, std::chrono::milliseconds(90)) << "with nothing to listen to it still waits";
  }
}

}  // namespace
}  // namespace fdrill
