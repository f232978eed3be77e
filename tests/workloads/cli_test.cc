#include "workloads/cli.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "common/core/version.h"
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

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(WorkloadCli, Defaults) {
  Result<Invocation> r = Parse({"-b", "4M", "-n", "10"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Config& c = r->config;
  EXPECT_FALSE(r->print_and_exit);
  EXPECT_EQ(c.op, Op::kAllReduce);
  EXPECT_EQ(c.dtype, DType::kFloat32);
  EXPECT_EQ(c.sizes, std::vector<uint64_t>{4u << 20});
  EXPECT_EQ(c.redop, RedOp::kSum);
  EXPECT_EQ(c.root, 0);
  EXPECT_FALSE(c.train.has_value());
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
  EXPECT_EQ(c.sizes, std::vector<uint64_t>{65536});
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

TEST(WorkloadCli, TheControllersCommandLine) {
  Result<Invocation> r =
      Parse({"--op", "all_reduce", "--dtype", "float32", "-b", "1048576", "-w", "3", "--duration",
             "95s", "--jsonl", "{tmpdir}/fdrill-x/rank-{rank}.jsonl", "--stop-file", "/tmp/s",
             "--backend", "mpi"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->config.sizes, std::vector<uint64_t>{1048576});
  EXPECT_EQ(r->config.warmup, 3);
  EXPECT_EQ(r->config.duration, std::chrono::seconds(95));
}

TEST(WorkloadCli, LineUpIsABarrierUnlessToldNone) {
  Result<Invocation> r = Parse({"-b", "4M", "-n", "10"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->config.lineup, Config::LineUp::kBarrier);
  r = Parse({"-b", "4M", "-n", "10", "--lineup", "none"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->config.lineup, Config::LineUp::kNone);
  EXPECT_EQ(ErrorOf({"-b", "4M", "-n", "1", "--lineup", "off"}), "--lineup off: barrier or none");
}

TEST(WorkloadCli, OpsDtypesRedopsAndRoot) {
  Result<Invocation> r = Parse({"-b", "64K", "-n", "1", "--op", "reduce", "--dtype", "bfloat16",
                                "--redop", "max", "--root", "3"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->config.op, Op::kReduce);
  EXPECT_EQ(r->config.dtype, DType::kBfloat16);
  EXPECT_EQ(r->config.redop, RedOp::kMax);
  EXPECT_EQ(r->config.root, 3);
  EXPECT_EQ(ErrorOf({"-b", "64K", "-n", "1", "--op", "all_gather", "--redop", "max"}),
            "--redop max: all_gather does not reduce; drop --redop");
  EXPECT_EQ(ErrorOf({"-b", "64K", "-n", "1", "--root", "1"}),
            "--root: all_reduce has no root (broadcast and reduce have one)");
  EXPECT_EQ(ErrorOf({"-b", "64K", "-n", "1", "--op", "broadcast", "--root", "-1"}),
            "--root must be a rank (0 or more), not -1");
}

TEST(WorkloadCli, UnknownOpDtypeAndRedopNameTheAcceptedOnes) {
  EXPECT_EQ(ErrorOf({"-b", "4M", "-n", "1", "--op", "allgather"}),
            "unknown --op \"allgather\": accepted: all_reduce, all_gather, reduce_scatter, "
            "broadcast, reduce, "
            "alltoall, sendrecv");
  EXPECT_EQ(ErrorOf({"-b", "4M", "-n", "1", "--dtype", "half"}),
            "unknown --dtype \"half\": accepted: float32, float64, int32, float16, bfloat16");
  EXPECT_EQ(ErrorOf({"-b", "4M", "-n", "1", "--redop", "avg"}),
            "unknown --redop \"avg\": accepted: sum, prod, min, max");
}

TEST(WorkloadCli, SweepFlagsAreNcclTests) {
  Result<Invocation> r = Parse({"-b", "8", "-e", "100", "-f", "2", "-n", "1"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->config.sizes, (std::vector<uint64_t>{8, 16, 32, 64}));
  r = Parse({"--minbytes", "1K", "--maxbytes", "4K", "--stepbytes", "1K", "-n", "1"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->config.sizes, (std::vector<uint64_t>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(ErrorOf({"-b", "4K", "-e", "1K", "-f", "2", "-n", "1"}),
            "-e/--maxbytes 1024 is less than -b/--minbytes 4096: the sweep runs from -b up to -e");
  EXPECT_TRUE(Contains(ErrorOf({"-b", "8", "-e", "40", "-i", "6", "-n", "1"}),
                       "-i/--stepbytes 6 is 6 bytes"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "8", "-e", "1M", "-f", "0", "-n", "1"}),
                       "-f/--stepfactor must be at least 1"));
  EXPECT_TRUE(
      Contains(ErrorOf({"-b", "8", "-e", "1Q", "-n", "1"}), "-e/--maxbytes: bad size unit"));
}

TEST(WorkloadCli, SizeMustBeAWholeNumberOfElements) {
  EXPECT_TRUE(Contains(ErrorOf({"-b", "6", "-n", "1"}), "multiple of 4 bytes"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "0", "-n", "1"}), "positive multiple of 4 bytes"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4X", "-n", "1"}), "--size: bad size unit"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "6", "-n", "1", "--dtype", "float64"}),
                       "multiple of 8 bytes (one float64"));
  EXPECT_EQ(ErrorOf({"-b", "6", "-n", "1", "--dtype", "float16"}), "<accepted>");
  EXPECT_TRUE(Contains(ErrorOf({"-n", "1"}), "--size is required"));
}

TEST(WorkloadCli, MustKnowWhenToStop) {
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M"}), "give -n/--iters N, --duration D, or both"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "-n", "0"}), "-n/--iters must be at least 1"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "--duration", "60"}),
                       "--duration: duration \"60\" has no unit"));
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "--duration", "0s"}), "--duration must be positive"));
}

TEST(WorkloadCli, OtherValuesAreChecked) {
  EXPECT_TRUE(
      Contains(ErrorOf({"-b", "4M", "-n", "1", "-w", "-1"}), "-w/--warmup must be 0 or more"));
  EXPECT_TRUE(
      Contains(ErrorOf({"-b", "4M", "-n", "1", "--timeout", "0s"}), "--timeout must be positive"));
  EXPECT_TRUE(
      Contains(ErrorOf({"-b", "4M", "-n", "5", "--corrupt-at", "5"}), "not a timed iteration"));
  // A sweep's iterations are numbered across its sizes.
  EXPECT_EQ(ErrorOf({"-b", "4K", "-e", "8K", "-f", "2", "-n", "5", "--corrupt-at", "9"}),
            "<accepted>");
  EXPECT_TRUE(Contains(ErrorOf({"-b", "4M", "-n", "1", "--frobnicate"}), "--frobnicate"));
  EXPECT_EQ(ErrorOf({"-b", "4M", "-n", "1", "--backend", "gloo"}),
            "unknown --backend \"gloo\": accepted: mpi, nccl");
}

TEST(WorkloadCli, NcclIsAcceptedExactlyWhenBuiltIn) {
  std::string error = ErrorOf({"-b", "4M", "-n", "1", "--backend", "nccl"});
  if (Contains(" " + BuiltBackendNames() + " ", " nccl ")) {
    EXPECT_EQ(error, "<accepted>");
  } else {
    EXPECT_TRUE(Contains(error, "--backend nccl: this binary was built without NCCL")) << error;
  }
}

TEST(WorkloadCli, TrainMode) {
  Result<Invocation> r = Parse({"--train", "--steps", "40", "--checkpoint-every", "10",
                                "--checkpoint-dir", "/tmp/ck", "-b", "64K", "--die-at-step", "25"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Config& c = r->config;
  ASSERT_TRUE(c.train.has_value());
  EXPECT_EQ(c.train->steps, 40);
  EXPECT_EQ(c.train->checkpoint_every, 10);
  EXPECT_EQ(c.train->checkpoint_dir, "/tmp/ck");
  EXPECT_EQ(c.train->die_at_step, 25);
  EXPECT_EQ(c.dtype, DType::kFloat64);
  EXPECT_EQ(c.warmup, 0);
  EXPECT_EQ(c.sizes, std::vector<uint64_t>{65536});
}

TEST(WorkloadCli, TrainModeErrors) {
  const std::vector<std::string> base = {
      "--train", "--steps", "40", "--checkpoint-every", "10", "--checkpoint-dir", "/tmp/ck"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> flags = base;
    flags.insert(flags.end(), more.begin(), more.end());
    if (std::find(flags.begin(), flags.end(), "-b") == flags.end())
      flags.insert(flags.end(), {"-b", "64K"});
    return ErrorOf(flags);
  };
  EXPECT_EQ(with({"--op", "all_gather"}), "--train all-reduces gradients: --op must be all_reduce");
  EXPECT_EQ(with({"--dtype", "float32"}),
            "--train keeps a float64 state: drop --dtype float32 (or give float64)");
  EXPECT_EQ(with({"--dtype", "float64"}), "<accepted>");
  EXPECT_EQ(with({"--redop", "max"}), "--train sums gradients: --redop must be sum");
  EXPECT_EQ(with({"-e", "1M"}), "--train runs one size: drop -e/-f/-i");
  EXPECT_EQ(with({"-n", "5"}), "--train runs --steps: drop -n/--iters and --duration");
  EXPECT_EQ(with({"-w", "1"}), "--train runs no warm-up: drop -w/--warmup");
  EXPECT_EQ(with({"--die-at-step", "40"}), "--die-at-step 40 is not a step (0..39)");
  EXPECT_TRUE(Contains(with({"-b", "12"}), "multiple of 8 bytes (one float64 element)"));
  EXPECT_EQ(ErrorOf({"--train", "-b", "64K"}),
            "--train needs --steps N, --checkpoint-every K and --checkpoint-dir DIR");
  EXPECT_EQ(ErrorOf({"--train", "--steps", "0", "--checkpoint-every", "1", "--checkpoint-dir", "d",
                     "-b", "8"}),
            "--steps must be at least 1, not 0");
  EXPECT_EQ(ErrorOf({"--train", "--steps", "5", "--checkpoint-every", "0", "--checkpoint-dir", "d",
                     "-b", "8"}),
            "--checkpoint-every must be at least 1, not 0");
  EXPECT_EQ(ErrorOf({"-b", "64K", "-n", "1", "--steps", "4"}),
            "--steps, --checkpoint-every, --checkpoint-dir and --die-at-step need --train");
}

TEST(WorkloadCli, VersionAndHelpPrintWithoutRunning) {
  Result<Invocation> version = Parse({"--version"});
  ASSERT_TRUE(version.ok());
  EXPECT_TRUE(version->print_and_exit);
  EXPECT_EQ(version->text, std::string("fdrill-collective ") + kFdrillVersion +
                               " (backends: " + BuiltBackendNames() + ")\n");
  Result<Invocation> help = Parse({"--help"});
  ASSERT_TRUE(help.ok());
  EXPECT_TRUE(help->print_and_exit);
  EXPECT_TRUE(Contains(help->text, "--stop-file"));
  EXPECT_TRUE(Contains(help->text, "--checkpoint-every"));
  EXPECT_FALSE(Contains(help->text, "--corrupt-at")) << "test-only flag shown in --help";
  EXPECT_FALSE(Contains(help->text, "--die-at-step")) << "test-only flag shown in --help";
}

}  // namespace
}  // namespace fdrill
