#include "harness/controller/progress.h"

#include <cstdio>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(Progress, TheLineSaysPhaseTimeBusbwAndFaults) {
  ProgressView v;
  v.phase = "flap";
  v.elapsed = seconds(42);
  v.total = seconds(120);
  v.busbw_gbps = 0.81;
  v.baseline_gbps = 1.76;
  v.faults = {"port-flap@gpu03"};
  EXPECT_EQ(
      FormatProgress(v),
      "[  42s / 2m00s] flap | busbw 0.81 GB/s = 0.46x baseline 1.76 | faults: port-flap@gpu03");
  v.culprit = "link gpu03 ib/mlx5_0/1 (high)";
  EXPECT_EQ(
      FormatProgress(v),
      "[  42s / 2m00s] flap | busbw 0.81 GB/s = 0.46x baseline 1.76 | faults: port-flap@gpu03 "
      "| culprit: link gpu03 ib/mlx5_0/1 (high)");
  v.culprit.clear();
  v.total_is_max = true;
  v.faults.clear();
  v.baseline_gbps.reset();
  v.attempt = 1;
  v.restarts_allowed = 3;
  EXPECT_EQ(FormatProgress(v),
            "[  42s / <=2m00s] flap | busbw 0.81 GB/s | restart 1/3 | no faults");
  EXPECT_EQ(FormatProgress(ProgressView{}), "[   0s / 0s] starting | busbw - | no faults");
  v.elapsed = std::chrono::hours(2) + std::chrono::minutes(5);
  EXPECT_EQ(FormatProgress(v).substr(0, 12), "[2h05m / <=2");
}

constexpr Clock::TimePoint kT0{};

// What a ProgressLine (on a terminal or not) writes while BODY updates it
// with a view that starts in phase "baseline", and then finishes it.
std::string Captured(bool terminal, const std::function<void(ProgressLine&, ProgressView&)>& body) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  {
    ProgressLine line(f, terminal);
    ProgressView v;
    v.phase = "baseline";
    body(line, v);
    line.Finish();
  }
  std::fclose(f);
  std::string out(buf, len);
  free(buf);
  return out;
}

TEST(Progress, OnATerminalOneLineRewrittenAtMostFourTimesASecond) {
  const std::string out = Captured(true, [](ProgressLine& line, ProgressView& v) {
    line.Update(v, kT0);
    line.Update(v, kT0 + milliseconds(100));  // too soon: not drawn
    v.phase = "hit";
    line.Update(v, kT0 + milliseconds(300));
  });
  EXPECT_EQ(out,
            "\r[   0s / 0s] baseline | busbw - | no faults\x1b[K\r[   0s / 0s] hit | busbw - | no "
            "faults\x1b[K\n");
}

TEST(Progress, NotATerminalPlainLinesOnChangeAndEveryTenSeconds) {
  // Finish writes no stray newline.
  const std::string out = Captured(false, [](ProgressLine& line, ProgressView& v) {
    line.Update(v, kT0);
    line.Update(v, kT0 + seconds(3));  // nothing changed: quiet
    v.faults = {"cut@n1"};
    line.Update(v, kT0 + seconds(4));   // a fault came: a line
    line.Update(v, kT0 + seconds(15));  // 11 s later: a line
  });
  EXPECT_EQ(out,
            "fdrill: [   0s / 0s] baseline | busbw - | no faults\n"
            "fdrill: [   0s / 0s] baseline | busbw - | faults: cut@n1\n"
            "fdrill: [   0s / 0s] baseline | busbw - | faults: cut@n1\n");
}

}  // namespace
}  // namespace fdrill
