#include "agents/workload.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace fdrill {

Workload::~Workload() {
  if (running()) Stop(std::chrono::seconds(2));
}

Status Workload::Start(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env, const std::string& log_path) {
  if (running())
    return FailedPrecondition("a workload is already running (pid " + std::to_string(pid_) + ")");
  if (argv.empty()) return InvalidArgument("workload argv is empty");
  int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return FailedPrecondition("cannot open " + log_path + ": " + strerror(errno));
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(log);
    return Internal(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    setsid();
    dup2(log, 1);
    dup2(log, 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    execvp(cargv[0], cargv.data());
    dprintf(2, "fdrill-agent: exec %s: %s\n", cargv[0], strerror(errno));
    _exit(127);
  }
  close(log);
  pid_ = pid;
  return Status::Ok();
}

std::optional<int> Workload::Poll() {
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return std::nullopt;
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::optional<int> Workload::Stop(Duration grace) {
  if (pid_ <= 0) return std::nullopt;
  pid_t group = pid_;
  kill(-group, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto code = Poll()) return code;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-group, SIGKILL);
  int status = 0;
  while (waitpid(group, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace fdrill
