#include "common/host/real_processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace fdrill {

namespace {

Result<std::string> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string ReadLink(const std::string& path) {
  char buf[4096];
  ssize_t n = readlink(path.c_str(), buf, sizeof(buf) - 1);
  return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

std::string SelfDir() {
  std::string exe = ReadLink("/proc/self/exe");
  auto slash = exe.rfind('/');
  return slash == std::string::npos ? std::string() : exe.substr(0, slash);
}

}  // namespace

Status ParseProcStat(const std::string& text, ProcInfo* info) {
  auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size())
    return InvalidArgument("malformed stat: " + text);
  std::istringstream rest(text.substr(close + 2));
  // Field 3 (state) is the first after the comm; start time is field 22.
  std::string field;
  rest >> info->state;
  info->cpu_ticks = 0;
  for (int i = 4; i <= 21 && rest >> field; ++i) {
    if (i == 14 || i == 15) info->cpu_ticks += std::strtoull(field.c_str(), nullptr, 10);
  }
  if (!(rest >> info->start_ticks))
    return InvalidArgument("malformed stat (no start time): " + text);
  return Status::Ok();
}

Result<std::vector<int>> RealProcessTable::Pids() {
  std::vector<int> pids;
  DIR* d = opendir(proc_.c_str());
  if (d == nullptr) return Unavailable("cannot list " + proc_ + ": " + std::strerror(errno));
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && pid > 0) pids.push_back(static_cast<int>(pid));
  }
  closedir(d);
  return pids;
}

Result<ProcInfo> RealProcessTable::Stat(int pid) {
  ProcInfo info;
  info.pid = pid;
  auto stat = Slurp(proc_ + "/" + std::to_string(pid) + "/stat");
  if (!stat.ok() || stat->empty()) return NotFound("process " + std::to_string(pid) + " is gone");
  if (Status s = ParseProcStat(*stat, &info); !s.ok()) return s;
  return info;
}

Result<ProcInfo> RealProcessTable::Inspect(int pid) {
  const std::string dir = proc_ + "/" + std::to_string(pid);
  auto stat = Stat(pid);
  if (!stat.ok()) return stat.status();
  ProcInfo info = std::move(*stat);
  std::string exe = ReadLink(dir + "/exe");
  if (auto deleted = exe.rfind(" (deleted)"); deleted != std::string::npos) exe.resize(deleted);
  info.exe_name = exe.substr(exe.rfind('/') + 1);
  info.net_ns = ReadLink(dir + "/ns/net");
  if (auto env = Slurp(dir + "/environ"); env.ok()) {
    size_t start = 0;
    while (start < env->size()) {
      size_t end = env->find('\0', start);
      if (end == std::string::npos) end = env->size();
      std::string_view kv(env->data() + start, end - start);
      if (auto eq = kv.find('='); eq != std::string_view::npos) {
        info.env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
      }
      start = end + 1;
    }
  }
  if (auto status = Slurp(dir + "/status"); status.ok()) {
    std::istringstream lines(*status);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("VmRSS:", 0) == 0) info.rss_kib = std::strtoull(line.c_str() + 6, nullptr, 10);
    }
  }
  return info;
}

int RealProcessTable::OwnPid() { return static_cast<int>(getpid()); }

std::string RealProcessTable::OwnNetNs() { return ReadLink(proc_ + "/self/ns/net"); }

Status RealProcessTable::Signal(int pid, int sig) {
  if (pid <= 0) return InvalidArgument("refusing to signal pid " + std::to_string(pid));
  if (kill(pid, sig) == 0) return Status::Ok();
  if (errno == ESRCH) return NotFound("process " + std::to_string(pid) + " is gone");
  return Unavailable("kill(" + std::to_string(pid) + ", " + std::to_string(sig) +
                     "): " + std::strerror(errno));
}

Result<int> RealProcessTable::Spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) return InvalidArgument("Spawn: empty argv");
  std::string path = argv[0];
  if (path.find('/') == std::string::npos) {
    std::string beside = SelfDir() + "/" + path;
    if (access(beside.c_str(), X_OK) == 0) path = beside;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd <= 2; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  pid_t pid = -1;
  int rc = path.find('/') == std::string::npos
               ? posix_spawnp(&pid, path.c_str(), &actions, &attr, args.data(), environ)
               : posix_spawn(&pid, path.c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Unavailable("cannot start " + path + ": " + std::strerror(rc));
  return static_cast<int>(pid);
}

void RealProcessTable::Reap(int pid) {
  if (pid <= 0) return;
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace fdrill
