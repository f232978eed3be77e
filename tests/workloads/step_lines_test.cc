// Step records from trainers' own log lines (workloads/step_lines.h): each
// preset against the real lines quoted in data/step_lines/README.md, a
// pattern of one's own, and the patterns that are refused.
#include "workloads/step_lines.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

StepLineReader Preset(const std::string& name) {
  auto r = StepLineReader::Make(name, "");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(*r);
}

// The one record LINE gives, read at T.
StepRecord One(StepLineReader& r, const std::string& line, double t = 0) {
  const std::vector<StepRecord> out = r.Feed(line, t);
  EXPECT_EQ(out.size(), 1u) << line;
  return out.empty() ? StepRecord{} : out.front();
}

TEST(StepLines, MegatronLinesCarryTheirStepTimeAndLoss) {
  struct Line {
    const char* where;
    std::string text;
    int64_t step;
    double time_ms, loss;
  };
  const Line lines[] = {
      {"NVIDIA/Megatron-LM#756 (2024), verbatim",
       " [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | "
       "elapsed time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 | "
       "learning rate: 1.420000E-05 | global batch size:   128 | lm loss: 1.818812E+00 | "
       "load_balancing_loss: 1.013377E+00 | loss scale: 1.0 | grad norm: 1.300 | num zeros: 0.0 | "
       "number of skipped iterations:   0 | number of nan iterations:   0 |",
       71, 5361.6, 1.818812},
      {"epfLLM/Megatron-LLM#11, verbatim: the format before 2024, no timestamp",
       " iteration      122/  250000 | consumed samples:       124928 | elapsed time per "
       "iteration (ms): 86545.2 | learning rate: 9.150E-06 | global batch size:  1024 | lm loss: "
       "2.504220E+00 | loss scale: 1.0 | grad norm: 0.231 | number of skipped iterations:   0 | "
       "number of nan iterations:   0 |",
       122, 86545.2, 2.50422},
      {"rendered from the 2026 format string (microsecond timestamp)",
       " [2026-01-20 14:03:07.412345] iteration      100/    5000 | consumed samples:        "
       "25600 | elapsed time per iteration (ms): 1234.5 | learning rate: 3.000000E-04 | global "
       "batch size:   256 | lm loss: 6.123456E+00 | loss scale: 1.0 | grad norm: 1.234 | number "
       "of skipped iterations:   0 | number of nan iterations:   0 |",
       100, 1234.5, 6.123456},
  };
  for (const Line& l : lines) {
    SCOPED_TRACE(l.where);
    StepLineReader r = Preset("megatron");
    const StepRecord got = One(r, l.text);
    EXPECT_EQ(got.step, l.step);
    EXPECT_DOUBLE_EQ(got.time_ms, l.time_ms);
    EXPECT_TRUE(got.timed_by_job);
    ASSERT_TRUE(got.loss);
    EXPECT_DOUBLE_EQ(*got.loss, l.loss);
    EXPECT_TRUE(
        r.Feed(" [2024-04-06 03:02:12] validation loss at iteration 71 | lm loss value: 1.8", 1)
            .empty());
  }
}

// torchtitan prints no time: the interval between its lines, over the
// steps between them.
// A preset whose lines carry no time: FIRST, read at T0, gives nothing (no
// interval yet); SECOND, read at T1, its record.
StepRecord AfterInterval(const std::string& preset, const std::string& first, double t0,
                         const std::string& second, double t1) {
  StepLineReader r = Preset(preset);
  EXPECT_TRUE(r.Feed(first, t0).empty()) << first;
  const StepRecord got = One(r, second, t1);
  EXPECT_FALSE(got.timed_by_job);
  EXPECT_TRUE(r.Feed("[titan] ... - root - INFO - validate step: 9999  loss:  7.1  tps: 9", t1 + 1)
                  .empty());
  return got;
}

TEST(StepLines, TorchtitanLinesAreTimedByTheirInterval) {
  struct Pair {
    const char* where;
    std::string first, second;
    double t1;  // the second read t1 s after the first
    int64_t step;
    double time_ms, tokens_per_s;
  };
  const Pair pairs[] = {
      {"pytorch/torchtitan#2389 (2026-02), verbatim",
       "[titan] 2026-02-24 19:46:17,508 - root - INFO - step:  4  loss:  7.62585  grad_norm: "
       "26.6250  memory: 66.91GiB(37.51%)  tps: 10,050  tflops: 314.71  mfu: 13.99%",
       "[titan] 2026-02-24 19:46:19,145 - root - INFO - step:  5  loss:  7.07623  grad_norm: "
       "46.5000  memory: 66.91GiB(37.51%)  tps: 10,007  tflops: 313.36  mfu: 13.93%",
       1.637, 5, 1637, 10007},
      {"pytorch/torchtitan#1287 (2025-06), verbatim, behind torchrun's prefix; then rendered "
       "with colours on, 10 steps in 20 s",
       "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  memory: "
       "49.66GiB(52.28%)  tps: 5,856  tflops: 339.16  mfu: 34.29%",
       "[titan] 2025-06-16 22:31:10,322 - root - INFO - \x1b[31mstep: 210  \x1b[32mloss:  7.62585  "
       "\x1b[38;2;180;60;0mgrad_norm: 26.6250  \x1b[38;2;54;234;195mmemory: 66.91GiB(37.51%)  "
       "\x1b[34mtps: 10,050  \x1b[36mtflops: 314.71  \x1b[35mmfu: 13.99%\x1b[39m",
       20, 210, 2000, 10050},
  };
  for (const Pair& p : pairs) {
    SCOPED_TRACE(p.where);
    const StepRecord got = AfterInterval("torchtitan", p.first, 100, p.second, 100 + p.t1);
    EXPECT_EQ(got.step, p.step);
    EXPECT_NEAR(got.time_ms, p.time_ms, 1e-6);
    ASSERT_TRUE(got.loss && got.tokens_per_s);
    EXPECT_DOUBLE_EQ(*got.tokens_per_s, p.tokens_per_s);  // the thousands separator dropped
  }
}

TEST(StepLines, DeepSpeedThroughputAndPipelineLines) {
  // deepspeedai/DeepSpeed#3742 (2023) and #5779 (2024), verbatim.
  StepRecord b = AfterInterval(
      "deepspeed",
      "[2023-07-25 21:03:17,269] [INFO] [timer.py:215:stop] epoch=0/micro_step=34/global_step=34, "
      "RunningAvgSamplesPerSec=7.864669709950182, CurrSamplesPerSec=8.00912418308922, "
      "MemAllocated=59.65GB, MaxMemAllocated=63.31GB",
      10,
      "[2024-07-17 19:53:24,981] [INFO] [timer.py:258:stop] epoch=0/micro_step=4500/"
      "global_step=4500, RunningAvgSamplesPerSec=16.124955167964504, "
      "CurrSamplesPerSec=16.807402094161112, MemAllocated=0.02GB, MaxMemAllocated=0.97GB",
      10 + 4466 * 0.5);
  EXPECT_EQ(b.step, 4500);
  EXPECT_NEAR(b.time_ms, 500, 1e-6);
  EXPECT_DOUBLE_EQ(*b.samples_per_s, 16.807402094161112);
  StepLineReader r = Preset("deepspeed");
  // The engine's own progress line is not a step record of this preset.
  EXPECT_TRUE(r.Feed("[2023-07-25 21:03:21,037] [INFO] [logging.py:96:log_dist] [Rank 0] step=35, "
                     "skipped=0, lr=[2.1731931451279077e-06, 2.1731931451279077e-06]",
                     11)
                  .empty());

  StepLineReader pipe = Preset("deepspeed-pipe");
  // mosaicml/examples' GPT-NeoX README and microsoft/onnxruntime's test
  // comment, verbatim.
  StepRecord c = One(pipe, "steps: 30 loss: 10.7133 iter time (s): 0.283 samples/sec: 226.457");
  EXPECT_EQ(c.step, 30);
  EXPECT_DOUBLE_EQ(c.time_ms, 283);
  EXPECT_DOUBLE_EQ(*c.loss, 10.7133);
  StepRecord d = One(pipe, "steps: 100 loss: 0.0585 iter time (s): 0.186 samples/sec: 53.694");
  EXPECT_EQ(d.step, 100);
  EXPECT_DOUBLE_EQ(d.time_ms, 186);
  EXPECT_DOUBLE_EQ(*d.samples_per_s, 53.694);
}

TEST(StepLines, HuggingFaceTrainerIsReadFromItsProgressBar) {
  StepLineReader r = Preset("hf-trainer");
  // microsoft/huggingface-transformers#7, verbatim: 1.49 it/s.
  StepRecord a = One(r, " 98%|█████████▊| 2086/2120 [26:01<00:22,  1.49it/s]");
  EXPECT_EQ(a.step, 2086);
  EXPECT_NEAR(a.time_ms, 1000 / 1.49, 1e-9);
  EXPECT_TRUE(a.timed_by_job);
  // tqdm's s/it, rendered; then the Trainer's dict, which is not a step line.
  StepLineReader slow = Preset("hf-trainer");
  EXPECT_DOUBLE_EQ(One(slow, "  2%|▏         | 12/500 [00:30<20:20,  2.50s/it]").time_ms, 2500);
  EXPECT_TRUE(slow.Feed("{'loss': 2.119, 'grad_norm': 37.657958984375, 'learning_rate': "
                        "4.5833333333333334e-05, 'epoch': 0.25}",
                        1)
                  .empty());
}

// Lightning's bar counts batches within an epoch and redraws itself with
// '\r': every redraw is read, each step once.
TEST(StepLines, LightningBarsGiveOneRecordPerBatchAcrossEpochs) {
  StepLineReader r = Preset("lightning");
  // The docstring of get_standard_metrics, verbatim: epoch 1 of 1095 batches.
  StepRecord a = One(r, "Epoch 1:   4%|▎         | 40/1095 [00:03<01:37, 10.84it/s, v_num=10]");
  EXPECT_EQ(a.step, 1095 + 40);
  EXPECT_NEAR(a.time_ms, 1000 / 10.84, 1e-9);
  // Lightning-AI/pytorch-lightning#4225 (1.x, s/it) and #3866 (no bar),
  // verbatim.
  StepLineReader old = Preset("lightning");
  StepRecord b = One(
      old, "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]");
  EXPECT_EQ(b.step, 4);
  EXPECT_DOUBLE_EQ(b.time_ms, 4470);
  StepLineReader bare = Preset("lightning");
  StepRecord c = One(
      bare,
      "Epoch 0:  93% 1586/1702 [12:50<00:56,  2.06it/s, loss=0.158, v_num=0, train_loss=0.149]");
  EXPECT_EQ(c.step, 1586);
  ASSERT_TRUE(c.loss);
  EXPECT_DOUBLE_EQ(*c.loss, 0.149);
  // Redraws on one line: each new batch once, a repeated one not again.
  StepLineReader redraw = Preset("lightning");
  const std::vector<StepRecord> many = redraw.Feed(
      "\rEpoch 0:  10%|█         | 10/100 [00:02<00:18,  5.00it/s, v_num=0]"
      "\rEpoch 0:  10%|█         | 10/100 [00:02<00:18,  5.00it/s, v_num=0]"
      "\rEpoch 0:  11%|█         | 11/100 [00:02<00:18,  5.00it/s, v_num=0]"
      "\rEpoch 0:  12%|█▏        | 12/100 [00:02<00:18,  5.00it/s, v_num=0]",
      3);
  ASSERT_EQ(many.size(), 3u);
  EXPECT_EQ(many[0].step, 10);
  EXPECT_EQ(many[2].step, 12);
}

TEST(StepLines, APatternOfOnesOwnWithNamedGroups) {
  auto r =
      StepLineReader::Make("", R"(^step (?<step>\d+) took (?P<time_s>[0-9.]+)s loss=(?<loss>\S+))");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  StepRecord a = One(*r, "step 7 took 0.183s loss=2.5");
  EXPECT_EQ(a.step, 7);
  EXPECT_DOUBLE_EQ(a.time_ms, 183);
  EXPECT_DOUBLE_EQ(*a.loss, 2.5);
  EXPECT_TRUE(r->Feed("epoch 1 done", 1).empty());
  EXPECT_TRUE(r->Feed("step 7 took 0.2s loss=2.4", 2).empty());  // the same step again
  // (?: (?= and a character class holding '(' are not captures.
  auto n = StepLineReader::Make("", R"((?:it|step)[(] *(?<step>\d+)(?=\))\) (?<time_ms>\d+)ms)");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  StepRecord b = One(*n, "step( 12) 40ms");
  EXPECT_EQ(b.step, 12);
  EXPECT_DOUBLE_EQ(b.time_ms, 40);
}

TEST(StepLines, PatternsThatCannotWorkAreRefusedSayingWhy) {
  auto none = StepLineReader::Make("", R"(took (?<time_ms>\d+) ms)");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no (?<step>...) group"), std::string::npos);
  auto broken = StepLineReader::Make("", R"(step (?<step>\d+)(()");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("does not compile"), std::string::npos);
  auto unknown = StepLineReader::Make("", R"(step (?<step>\d+) (?<sped>\d+))");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown group name \"sped\""), std::string::npos)
      << unknown.status().message();
  auto preset = StepLineReader::Make("megatorn", "");
  ASSERT_FALSE(preset.ok());
  EXPECT_NE(preset.status().message().find("did you mean \"megatron\"? (presets: deepspeed, "
                                           "deepspeed-pipe, hf-trainer, lightning, megatron, "
                                           "torchtitan)"),
            std::string::npos)
      << preset.status().message();
  EXPECT_FALSE(StepLineReader::Make("megatron", "step (?<step>\\d+)").ok());  // both
  EXPECT_FALSE(StepLineReader::Make("", "").ok());                            // neither
  std::vector<std::string> names;
  EXPECT_FALSE(StripGroupNames("(?<step\\d+)", &names).ok());
}

}  // namespace
}  // namespace fdrill
