#include "workloads/cli.h"

#include <gtest/gtest.h>

#include "workloads/backends.h"

namespace fdrill {
namespace {

Result<Invocation> Parse(std::vector<std::string> flags) {
  flags.insert(flags.begin(), "fdrill-collective");
  return ParseCommandLine(flags);
}

// The error message for `flags`, or a marker when they were accepted.
std::string ErrorOf(std::vector<std::string> flags) {
  Result<Invocation> r = Parse(std::move(flags));
  return r.ok() ? "<accepted>" : r.status().message();
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(WorkloadCli, Defaults) {
  Result<Invocation> r = Parse({"-b", "4M", "-n", "10"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Config& c = r->config;
  EXPECT_FALSE(r->print_and_exit);
  EXPECT_EQ(c.op, Op::kAllReduce);
  EXPECT_EQ(c.dtype, DType::kFloat32);
  EXPECT_EQ(c.bytes, 4u << 20);
  EXPECT_EQ(c.count(), 1u << 20);
  EXPECT_EQ(c.iters, 10);
  EXPECT_FALSE(c.duration.has_value());
  EXPECT_EQ(c.warmup, 5);
  EXPECT_EQ(c.backend, "mpi");
  EXPECT_EQ(c.timeout, std::chrono::seconds(60));
  EXPECT_TRUE(c.jsonl.empty());
  EXPECT_FALSE(c.corrupt_at.has_value());
}

TEST(WorkloadCli, AllFlags) {
  Result<Invocation> r = Parse({"--op",         "all_reduce",
                                "--dtype",      "float32",
                                "--size",       "64K",
                                "--iters",      "3",
                                "--duration",   "2m",
                                "--warmup",     "0",
                                "--jsonl",      "{tmpdir}/r{rank}.jsonl",
                                "--stop-file",  "/tmp/stop",
                                "--timeout",    "500ms",
                                "--corrupt-at", "2"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Config& c = r->config;
  EXPECT_EQ(c.bytes, 65536u);
  EXPECT_EQ(c.iters, 3);
  EXPECT_EQ(c.duration, std::chrono::minutes(2));
  EXPECT_EQ(c.warmup, 0);
  EXPECT_EQ(c.jsonl, "{tmpdir}/r{rank}.jsonl");
  EXPECT_EQ(c.stop_file, "/tmp/stop");
  EXPECT_EQ(c.timeout, std::chrono::milliseconds(500));
  EXPECT_EQ(c.corrupt_at, 2);
}

TEST(WorkloadCli, DurationAloneIsEnough) {
  Result<Invocation> r = Parse({"-b", "4K", "--duration", "60s"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->config.iters.has_value());
  EXPECT_EQ(r->config.duration, std::chrono::seconds(60));
}

TEST(WorkloadCli, UnknownOpAndDtypeNameTheAcceptedOnes) {
  EXPECT_EQ(ErrorOf({"-b", "4M", "-n", "1", "--op", "all_gather"}),
            "unknown --op \"all_gather\": accepted: all_reduce");
  EXPECT_EQ(ErrorOf({"-b", "4M", "-n", "1", "--dtype", "bfloat16"}), "unknown --dtype \"bfloat16\": accepted: float32");
}

TEST(WorkloadCli, SizeMustBeAWholeNumberOfElements) {
  EXPECT_TRUE(Contains(ErrorOf({"-b", "6", "-n", "1"}), "multiple of 4 bytes"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "0", "-n", "1"}), "positive multiple of 4 bytes"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4X", "-n", "1"}), "--size: bad size unit"));
  EXPECT_TRUE(Contains(ErrorOf({"-n", "1"}), "--size is required"));
}

TEST(WorkloadCli, MustKnowWhenToStop) {
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M"}), "give -n/--iters N, --duration D, or both"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "-n", "0"}), "-n/--iters must be at least 1"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "--duration", "60"}), "--duration: duration \"60\" has no unit"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "--duration", "0s"}), "--duration must be positive"));
}

TEST(WorkloadCli, OtherValuesAreChecked) {
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "-n", "1", "-w", "-1"}), "-w/--warmup must be 0 or more"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "-n", "1", "--timeout", "0s"}), "--timeout must be positive"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "-n", "5", "--corrupt-at", "5"}), "not a timed iteration"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "-n", "1", "--frobnicate"}), "--frobnicate"));
  EXPECT_EQ(ErrorOf({"-b", "4M", "-n", "1", "--backend", "gloo"}), "unknown --backend \"gloo\": accepted: mpi, nccl");
}

TEST(WorkloadCli, NcclIsAcceptedExactlyWhenBuiltIn) {
  std::string error = ErrorOf({"-b", "4M", "-n", "1", "--backend", "nccl"});
  if (Contains(" " + BuiltBackendNames() + " ", " nccl ")) {
    EXPECT_EQ(error, "<accepted>");
  } else {
    EXPECT_TRUE(Contains(error, "--backend nccl: this binary was built without NCCL")) << error;
  }
}

TEST(WorkloadCli, VersionAndHelpPrintWithoutRunning) {
  Result<Invocation> version = Parse({"--version"});
  ASSERT_TRUE(version.ok());
  EXPECT_TRUE(version->print_and_exit);
  EXPECT_EQ(version->text, "fdrill-collective 0.1.0 (backends: " + BuiltBackendNames() + ")\n");
  Result<Invocation> help = Parse({"--help"});
  ASSERT_TRUE(help.ok());
  EXPECT_TRUE(help->print_and_exit);
  EXPECT_TRUE(Contains(help->text, "--stop-file"));
  EXPECT_FALSE(Contains(help->text, "--corrupt-at")) << "test-only flag shown in --help";
}

}  // namespace
}  // namespace fdrill
