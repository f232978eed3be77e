// AddJobOutcomes / JudgeJob: what the job did under each fault, against
// expect.job and NCCL's prediction.
#include "reports/job_outcome.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

Event At(double t, const std::string& type) {
  Event e;
  e.t = t;
  e.type = type;
  return e;
}

Iteration EndingAt(double end_s) {
  Iteration it;
  it.end_s = end_s;
  it.start_s = end_s - 0.01;
  return it;
}

std::vector<FaultStats> Faults() {
  FaultStats a{.id = "flap", .kind = "ib_port_flap", .node = "n1", .applied_at_s = 10};
  a.reverted_at_s = 13;
  FaultStats b{.id = "dead", .kind = "link_down", .node = "n2", .applied_at_s = 30};
  b.reverted_at_s = 90;
  return {a, b};
}

TEST(JobOutcome, RodeThroughThenErrorAgainstThePrediction) {
  auto faults = Faults();
  Event exit = At(65, "workload_failed");
  exit.cause = "exit";
  AddJobOutcomes({exit}, {EndingAt(5), EndingAt(14), EndingAt(29)},
                 {{"flap", "rode_through"}, {"dead", "error"}}, &faults);
  EXPECT_EQ(faults[0].job_outcome, "rode_through");
  EXPECT_EQ(faults[0].predicted_job, "rode_through");
  EXPECT_EQ(faults[1].job_outcome, "error");
  EXPECT_EQ(faults[1].predicted_job, "error");
  EXPECT_TRUE(JudgeJob("as_predicted", faults).pass);
  EXPECT_TRUE(JudgeJob("error_not_hang", faults).pass);
  EXPECT_FALSE(JudgeJob("rides_through", faults).pass);
  EXPECT_EQ(JudgeJob("rides_through", faults).name, "job: rides_through");
}

TEST(JobOutcome, NoIterationAfterTheFaultAndNoExitIsAHang) {
  auto faults = Faults();
  // The job stopped at 31 s and never exited: NCCL_IB_TIMEOUT=0 forever.
  AddJobOutcomes({}, {EndingAt(14), EndingAt(31)}, {{"dead", "error"}}, &faults);
  EXPECT_EQ(faults[1].job_outcome, "hang");
  EXPECT_FALSE(JudgeJob("error_not_hang", faults).pass);
  EXPECT_FALSE(JudgeJob("as_predicted", faults).pass);
  // The restart policy's hang detection says so too.
  auto again = Faults();
  Event hung = At(60, "workload_failed");
  hung.cause = "hang";
  AddJobOutcomes({hung}, {EndingAt(14), EndingAt(100)}, {}, &again);
  EXPECT_EQ(again[1].job_outcome, "hang");
  EXPECT_FALSE(again[1].predicted_job);
}

TEST(JobOutcome, TheDrillStoppingTheJobIsNotAnError) {
  auto faults = Faults();
  Event forced = At(95, "workload_exit");
  forced.exit_code = 143;
  forced.forced = true;
  AddJobOutcomes({forced}, {EndingAt(14), EndingAt(92)}, {}, &faults);
  EXPECT_EQ(faults[1].job_outcome, "rode_through");
  Event failed = At(40, "workload_exit");
  failed.exit_code = 1;
  auto again = Faults();
  AddJobOutcomes({failed}, {EndingAt(14)}, {}, &again);
  EXPECT_EQ(again[1].job_outcome, "error");
}

}  // namespace
}  // namespace fdrill
