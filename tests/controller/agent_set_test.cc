#include "harness/controller/agent_set.h"

#include <gtest/gtest.h>

#include "common/wire/wire.h"

namespace fdrill {
namespace {

// inventory.json and `fdrill inventory --json` hold each agent's reply body:
// none of the wire envelope ("v" leaked into every node before), the node
// as the controller named it, an error where an agent did not answer.
TEST(ClusterInventory, KeepsEachReplysBodyWithoutTheEnvelope) {
  Json reply = MakeReply(7, {{"node", "agent-says"}, {"gpus", Json::array()}});
  std::vector<Result<Json>> replies = {reply, Unavailable("connection refused")};
  Json cluster = ClusterInventory({"n1", "n2"}, replies);
  ASSERT_EQ(cluster["nodes"].size(), 2u);
  const Json& n1 = cluster["nodes"][0];
  EXPECT_EQ(n1, (Json{{"node", "n1"}, {"gpus", Json::array()}})) << n1.dump();
  const Json& n2 = cluster["nodes"][1];
  EXPECT_EQ(n2["node"], "n2");
  EXPECT_NE(n2["error"].get<std::string>().find("connection refused"), std::string::npos);
}

}  // namespace
}  // namespace fdrill
