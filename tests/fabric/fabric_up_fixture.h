// A fixture for tests of `fdrill fabric up`: every seam it acts through
// (process runner, sysfs, node system, clock) is a recording fake, and
// options_ asks for `nodes` nodes running /opt/fdrill/bin/fdrill-agent.
#pragma once

#include <gtest/gtest.h>

#include "fabric/fabric_up.h"
#include "tests/fabric/fake_node_system.h"
#include "tests/fakes/fake_host.h"

namespace fdrill {

class FabricUpFixture : public ::testing::Test {
 protected:
  explicit FabricUpFixture(int nodes) : node_(&clock_) {
    fs_.files["/proc/self/mountinfo"] = "22 1 0:21 / /proc rw - proc proc rw\n";
    options_.shape.nodes = nodes;
    options_.agent_bin = "/opt/fdrill/bin/fdrill-agent";
  }
  FabricHost Host() { return FabricHost{&runner_, &fs_, &node_, &clock_}; }

  FakeProcessRunner runner_;
  FakeSysFs fs_;
  SteppingClock clock_;
  FakeNodeSystem node_;
  UpOptions options_;
};

}  // namespace fdrill
