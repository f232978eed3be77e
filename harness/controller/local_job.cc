#include "harness/controller/local_job.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

namespace fdrill {

namespace {
constexpr size_t kTailBytes = 64 * 1024;
constexpr size_t kMaxLine = 1 << 20;  // a longer "line" is cut (a binary blob on stdout)
}  // namespace

LocalJob::~LocalJob() {
  Stop(std::chrono::seconds(5));
  if (reader_.joinable()) reader_.join();
}

Status LocalJob::Start(const std::vector<std::string>& argv) {
  if (argv.empty()) return InvalidArgument("the launcher command is empty");
  std::unique_lock<std::mutex> lock(mu_);
  if (pid_ != 0)
    return FailedPrecondition("a job started by this drill still runs (pid " +
                              std::to_string(pid_) + ")");
  // The previous job's reader is past its last use of mu_ once on_exit has
  // returned (pid_ is 0): then it can be joined under the lock.
  cv_.wait(lock, [this] { return !active_; });
  if (reader_.joinable()) reader_.join();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  // The program's path, found here: between fork and exec the child may
  // only make async-signal-safe calls (this process has threads).
  std::string path = argv[0];
  if (path.find('/') == std::string::npos) {
    path.clear();
    const char* env_path = std::getenv("PATH");
    std::string dirs = env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin";
    for (size_t from = 0; from <= dirs.size();) {
      size_t colon = dirs.find(':', from);
      if (colon == std::string::npos) colon = dirs.size();
      std::string candidate =
          (colon > from ? dirs.substr(from, colon - from) : std::string(".")) + "/" + argv[0];
      if (access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        break;
      }
      from = colon + 1;
    }
    if (path.empty()) {
      close(fds[0]);
      close(fds[1]);
      return FailedPrecondition("cannot start " + argv[0] +
                                ": No such file or directory (not found in PATH)");
    }
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return Internal(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    // The child. Its own process group (Stop signals the job, never us);
    // SIGTERM when the thread that started it ends — a controller killed
    // with SIGKILL takes its launcher (and through it the ranks) along
    // instead of leaving a job running on the cluster.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the controller died before prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGPIPE}) signal(sig, SIG_DFL);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execv(path.c_str(), args.data());
    const char msg[] = "fdrill: exec of the launcher failed\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(127);
  }
  setpgid(pid, pid);  // also here: no race with a Stop before the child ran
  close(fds[1]);
  pid_ = pid;
  leader_reaped_ = false;
  last_code_.reset();
  active_ = true;
  reader_ = std::thread([this, fd = fds[0], pid] { ReadLoop(fd, pid); });
  return Status::Ok();
}

void LocalJob::ReadLoop(int fd, pid_t pid) {
  std::string tail, line;
  char buf[16384];
  std::optional<int> status;  // the leader's, once reaped
  int quiet_polls = 0;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, 200);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      // No output: reap the leader if it has ended. A daemonised grandchild
      // may hold the pipe forever, so after the leader's end we read on for
      // 2 s of silence at most.
      int st = 0;
      if (!status && waitpid(pid, &st, WNOHANG) == pid) {
        status = st;
        std::lock_guard<std::mutex> lock(mu_);
        leader_reaped_ = true;
      }
      if (status && ++quiet_polls >= 10) break;
      continue;
    }
    quiet_polls = 0;
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    tail.append(buf, static_cast<size_t>(n));
    if (tail.size() > 2 * kTailBytes) tail.erase(0, tail.size() - kTailBytes);
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') {
        if (line.size() < kMaxLine) line.push_back(buf[i]);
        continue;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      on_line_(line);
      line.clear();
    }
  }
  close(fd);
  if (!line.empty()) on_line_(line);
  if (tail.size() > kTailBytes) tail.erase(0, tail.size() - kTailBytes);
  // The leader is reaped here and only here (Stop signals its group only
  // while pid_ is set, i.e. before this).
  int st = status.value_or(0);
  if (!status) {
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  {
    std::lock_guard<std::mutex> lock(mu_);
    pid_ = 0;
    last_code_ = code;
  }
  on_exit_(code, tail);
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = false;
  }
  cv_.notify_all();
}

int LocalJob::Stop(Duration grace) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!active_) return last_code_.value_or(-1);
  // pid_ is set until the reader reaps... but the reader may have reaped the
  // leader (WNOHANG) and still be draining: then the group id could be
  // reused, so the group is only signalled while the leader is unreaped
  // (and never with pid_ 0, which kill() reads as our own group).
  if (pid_ != 0 && !leader_reaped_) kill(-pid_, SIGTERM);
  if (!cv_.wait_for(lock, grace, [this] { return !active_; })) {
    if (pid_ != 0 && !leader_reaped_) kill(-pid_, SIGKILL);
    cv_.wait_for(lock, std::chrono::seconds(10), [this] { return !active_; });
  }
  return last_code_.value_or(-1);
}

bool LocalJob::running() {
  std::lock_guard<std::mutex> lock(mu_);
  return pid_ != 0;
}

pid_t LocalJob::pid() {
  std::lock_guard<std::mutex> lock(mu_);
  return pid_;
}

}  // namespace fdrill
