// LocalJob runs a real process group here (sh, sleep): its lines, its exit
// code, and Stop's TERM-then-KILL on the whole group.
#include "harness/controller/local_job.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace fdrill {
namespace {

struct Seen {
  std::mutex mu;
  std::vector<std::string> lines;
  std::optional<int> code;
  std::string tail;
  std::condition_variable cv;
  LocalJob::LineFn Line() {
    return [this](const std::string& l) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(l);
    };
  }
  LocalJob::ExitFn Exit() {
    return [this](int c, const std::string& t) {
      std::lock_guard<std::mutex> lock(mu);
      code = c;
      tail = t;
      cv.notify_all();
    };
  }
  bool WaitExit(std::chrono::seconds s = std::chrono::seconds(20)) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, s, [this] { return code.has_value(); });
  }
};

TEST(LocalJob, LinesStderrAndExitCode) {
  Seen seen;
  LocalJob job(seen.Line(), seen.Exit());
  ASSERT_TRUE(
      job.Start({"sh", "-c", "printf 'a\\r\\nb\\n'; echo err >&2; printf tail; exit 3"}).ok());
  ASSERT_TRUE(seen.WaitExit());
  EXPECT_EQ(*seen.code, 3);
  EXPECT_EQ(seen.lines, (std::vector<std::string>{"a", "b", "err", "tail"}));
  EXPECT_EQ(seen.tail, "a\r\nb\nerr\ntail");
  EXPECT_FALSE(job.running());
  EXPECT_EQ(job.Stop(std::chrono::seconds(1)), 3);  // nothing runs: the last code
}

// Issue 24: Stop returns only once on_exit has returned, so a caller that
// records the exit itself unless on_exit did (WorkloadSupervisor::Stop)
// never records it twice (seen at 200 agents: two workload_exit events).
// on_exit here takes 300 ms.
TEST(LocalJob, Issue24StopReturnsOnceOnExitHasReturned) {
  std::atomic<bool> exit_done{false};
  LocalJob job([](const std::string&) {},
               [&](int, const std::string&) {
                 std::this_thread::sleep_for(std::chrono::milliseconds(300));
                 exit_done = true;
               });
  ASSERT_TRUE(job.Start({"sleep", "30"}).ok());
  EXPECT_EQ(job.Stop(std::chrono::seconds(10)), 128 + SIGTERM);
  EXPECT_TRUE(exit_done);
}

TEST(LocalJob, StopEndsTheWholeGroupTermThenKill) {
  Seen seen;
  LocalJob job(seen.Line(), seen.Exit());
  // The leader ignores TERM and has a child that also ignores it: only the
  // KILL after the grace ends them; the child must not outlive the stop.
  ASSERT_TRUE(
      job.Start({"sh", "-c",
                 "trap '' TERM; sh -c \"trap '' TERM; echo child \\$\\$; sleep 300\" & wait"})
          .ok());
  pid_t child = 0;
  for (int i = 0; i < 200 && child == 0; ++i) {
    {
      std::lock_guard<std::mutex> lock(seen.mu);
      for (const auto& l : seen.lines) {
        if (l.rfind("child ", 0) == 0) child = std::stoi(l.substr(6));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GT(child, 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(job.Stop(std::chrono::milliseconds(300)), 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_FALSE(job.running());
  // The child was in the group: gone (or a zombie of init, not running).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(kill(child, 0) != 0 ||
              std::ifstream("/proc/" + std::to_string(child) + "/stat").peek() == EOF || [&] {
                std::string stat;
                std::getline(std::ifstream("/proc/" + std::to_string(child) + "/stat"), stat);
                return stat.find(") Z") != std::string::npos;
              }());
}

TEST(LocalJob, TermIsEnoughForAWellBehavedLauncher) {
  Seen seen;
  LocalJob job(seen.Line(), seen.Exit());
  ASSERT_TRUE(job.Start({"sleep", "300"}).ok());
  EXPECT_EQ(job.Stop(std::chrono::seconds(10)), 128 + SIGTERM);
  ASSERT_TRUE(seen.WaitExit());
  EXPECT_EQ(*seen.code, 128 + SIGTERM);
}

TEST(LocalJob, ALauncherThatIsNotThereIsAClearError) {
  Seen seen;
  LocalJob job(seen.Line(), seen.Exit());
  auto st = job.Start({"fdrill-no-such-launcher", "-np", "2"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "cannot start fdrill-no-such-launcher: No such file or directory (not found in PATH)");
  EXPECT_FALSE(job.running());
}

TEST(LocalJob, StartsAgainAfterAnExit) {
  Seen seen;
  LocalJob job(seen.Line(), seen.Exit());
  ASSERT_TRUE(job.Start({"sh", "-c", "echo one"}).ok());
  ASSERT_TRUE(seen.WaitExit());
  seen.code.reset();
  ASSERT_TRUE(job.Start({"sh", "-c", "echo two; exit 1"}).ok());
  ASSERT_TRUE(seen.WaitExit());
  EXPECT_EQ(*seen.code, 1);
  EXPECT_EQ(seen.lines, (std::vector<std::string>{"one", "two"}));
}

bool Gone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::string stat;
  std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/stat"), stat);
  return stat.find(") Z") != std::string::npos;  // a zombie waiting for init
}

// A controller killed with SIGKILL takes its launcher along (SIGTERM by
// PR_SET_PDEATHSIG): a process stands in for the controller here.
TEST(LocalJob, TheLauncherDiesWithTheController) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t controller = fork();
  ASSERT_GE(controller, 0);
  if (controller == 0) {
    close(fds[0]);
    LocalJob job([](const std::string&) {}, [](int, const std::string&) {});
    if (!job.Start({"sleep", "300"}).ok()) _exit(1);
    const pid_t pid = job.pid();
    (void)!write(fds[1], &pid, sizeof(pid));
    for (;;) pause();
  }
  close(fds[1]);
  pid_t launcher = 0;
  ASSERT_EQ(read(fds[0], &launcher, sizeof(launcher)), static_cast<ssize_t>(sizeof(launcher)));
  close(fds[0]);
  ASSERT_GT(launcher, 0);
  EXPECT_FALSE(Gone(launcher));
  kill(controller, SIGKILL);
  int st = 0;
  waitpid(controller, &st, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = Gone(launcher);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "the launcher " << launcher << " outlived its controller";
  if (!gone) kill(launcher, SIGKILL);  // ours: never leave it behind
}

}  // namespace
}  // namespace fdrill
