// What a run was tested on (inventory.json -> reports/fingerprint.h) and
// what `fdrill compare` says differs between two runs' nodes, first.
#include "reports/fingerprint.h"

#include <fstream>

#include <gtest/gtest.h>

#include "reports/compare.h"
#include "reports/run_dir.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

using reports_test::SyntheticRun;
using reports_test::TempDir;

// Four nodes; n3 runs CONGESTION and, when FIRMWARE is set, that HCA
// firmware.
std::string Inventory(const std::string& congestion, const std::string& firmware = "28.39.1002") {
  std::string nodes;
  for (int n = 0; n < 4; ++n) {
    const std::string cc = n == 3 ? congestion : "cubic";
    const std::string fw = n == 3 ? firmware : "28.39.1002";
    nodes += (n ? "," : "") + std::string(R"({"node": "n)") + std::to_string(n) +
             R"(", "hcas": [{"name": "mlx5_0", "fw_ver": ")" + fw +
             R"("}], "netdevs": [{"name": "fab0", "mtu": 1500}],
      "software": {"kernel": "6.1.0-18-amd64", "fdrill": "0.9.0", "modules": {"mlx5_core": "24.10"},
                   "sysctl": {"net.ipv4.tcp_congestion_control": ")" +
             cc + R"("}}})";
  }
  return R"({"nodes": [)" + nodes + R"(, {"node": "n4", "error": "connection refused"}]})";
}

TEST(Fingerprint, EachKeyWithItsValuesAndTheirNodes) {
  auto f = ParseFingerprint(Inventory("reno"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  using Values = std::map<std::string, std::vector<std::string>>;
  EXPECT_EQ((*f)["kernel"], (Values{{"6.1.0-18-amd64", {"n0", "n1", "n2", "n3"}}}));
  EXPECT_EQ((*f)["sysctl net.ipv4.tcp_congestion_control"],
            (Values{{"cubic", {"n0", "n1", "n2"}}, {"reno", {"n3"}}}));
  EXPECT_EQ((*f)["hca mlx5_0 fw_ver"], (Values{{"28.39.1002", {"n0", "n1", "n2", "n3"}}}));
  EXPECT_EQ((*f)["netdev fab0 mtu"], (Values{{"1500", {"n0", "n1", "n2", "n3"}}}));
  EXPECT_EQ((*f)["module mlx5_core"], (Values{{"24.10", {"n0", "n1", "n2", "n3"}}}));
  EXPECT_EQ((*f)["fdrill"], (Values{{"0.9.0", {"n0", "n1", "n2", "n3"}}}));
  EXPECT_FALSE(ParseFingerprint("[1]").ok());
  EXPECT_TRUE(ParseFingerprint(R"({"nodes": []})")->empty());
}

TEST(Fingerprint, TheDifferencesAreTheKeysThatChanged) {
  const Fingerprint a = *ParseFingerprint(Inventory("cubic"));
  const Fingerprint b = *ParseFingerprint(Inventory("reno", "28.40.1000"));
  EXPECT_TRUE(DiffFingerprints(a, a).empty());
  const auto d = DiffFingerprints(a, b);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].key, "hca mlx5_0 fw_ver");
  EXPECT_EQ(d[0].a, "28.39.1002 on n0, n1, n2, n3");
  EXPECT_EQ(d[0].b, "28.39.1002 on n0, n1, n2; 28.40.1000 on n3");
  EXPECT_EQ(d[1].key, "sysctl net.ipv4.tcp_congestion_control");
}

// What the job's ranks loaded, from its log's "# loaded" lines.
TEST(Fingerprint, LibrariesTheWorkloadLoaded) {
  using Values = std::map<std::string, std::vector<std::string>>;
  const std::string log =
      "# loaded mpi on n0, n1: Open MPI v4.1.4, package: Debian OpenMPI (/usr/lib/libmpi.so.40)\n"
      "rank 1 says something\n"
      // A relaunch: the last run of lines is what the job ended on.
      "# loaded mpi on n0: Open MPI v5.0.3 (/opt/lib/libmpi.so.40)\n"
      "# loaded mpi on n1, n2: Open MPI v4.1.4 (/usr/lib/libmpi.so.40)\n"
      "# loaded nccl on n0, n1, n2: NCCL 2.28.3 (/usr/lib/libnccl.so.2.28.3)\n"
      "# loaded garbage\n";
  Fingerprint f;
  AddLoadedLibraries(log, "", &f);
  EXPECT_EQ(f.size(), 2u);
  EXPECT_EQ(f["workload mpi"], (Values{{"Open MPI v4.1.4 (/usr/lib/libmpi.so.40)", {"n1", "n2"}},
                                       {"Open MPI v5.0.3 (/opt/lib/libmpi.so.40)", {"n0"}}}));
  EXPECT_EQ(f["workload nccl"],
            (Values{{"NCCL 2.28.3 (/usr/lib/libnccl.so.2.28.3)", {"n0", "n1", "n2"}}}));
  Fingerprint tenant;
  AddLoadedLibraries(log, "train", &tenant);
  EXPECT_EQ(tenant.count("workload train mpi"), 1u);
  Fingerprint none;
  AddLoadedLibraries("# Avg bus bandwidth    : 1.2\n", "", &none);
  EXPECT_TRUE(none.empty());
}

// fdrill compare: what differs, before the numbers; or that it cannot say.
TEST(Fingerprint, CompareSaysWhatDiffersFirst) {
  SyntheticRun run = SyntheticRun::Standard();
  TempDir da, db;
  run.WriteTo(da.path());
  run.WriteTo(db.path());
  auto compare = [&] {
    Result<Comparison> c = CompareRunDirs(da.path().string(), db.path().string());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Comparison{};
  };
  Comparison none = compare();
  EXPECT_FALSE(none.fingerprinted);
  EXPECT_NE(RenderCompareMarkdown(none).find("not recorded by both sides"), std::string::npos);

  std::ofstream(da.path() / kInventoryFile) << Inventory("cubic");
  std::ofstream(db.path() / kInventoryFile) << Inventory("cubic");
  Comparison same = compare();
  EXPECT_TRUE(same.fingerprinted);
  EXPECT_TRUE(same.differences.empty());
  EXPECT_NE(RenderCompareMarkdown(same).find("the same in both"), std::string::npos);

  std::ofstream(db.path() / kInventoryFile) << Inventory("reno");
  Comparison changed = compare();
  ASSERT_EQ(changed.differences.size(), 1u);
  const std::string md = RenderCompareMarkdown(changed);
  const size_t differs = md.find(
      "| sysctl net.ipv4.tcp_congestion_control | cubic on n0, n1, n2, n3 | cubic on n0, n1, n2; "
      "reno on n3 |");
  EXPECT_NE(differs, std::string::npos) << md;
  EXPECT_LT(differs, md.find("| op | size (B)"));
  const auto json = nlohmann::json::parse(RenderCompareJson(changed));
  EXPECT_EQ(json["differences"][0]["key"], "sysctl net.ipv4.tcp_congestion_control");

  // The MPI the job loaded, from each side's workload.log.
  std::ofstream(db.path() / kInventoryFile) << Inventory("cubic");
  std::ofstream(da.path() / kWorkloadLogFile) << "# loaded mpi on n0, n1: Open MPI v4.1.4\n";
  std::ofstream(db.path() / kWorkloadLogFile) << "# loaded mpi on n0, n1: Open MPI v5.0.3\n";
  Comparison mpi = compare();
  ASSERT_EQ(mpi.differences.size(), 1u);
  EXPECT_EQ(mpi.differences[0].key, "workload mpi");
  EXPECT_EQ(mpi.differences[0].a, "Open MPI v4.1.4 on n0, n1");
  EXPECT_EQ(mpi.differences[0].b, "Open MPI v5.0.3 on n0, n1");
}

}  // namespace
}  // namespace fdrill
