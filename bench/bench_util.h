// Small helpers the bench programs share: percentiles, a child process with
// its stdout on a pipe, and a process's CPU time and RSS from /proc.
// Benchmarks only; nothing here is used by fdrill itself.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fdrill::bench {

using SteadyClock = std::chrono::steady_clock;

inline double Ms(SteadyClock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// Nearest-rank percentile (p in 0..100) of values; 0 when empty.
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// CPU seconds (user + system) this process has used, its threads included.
inline double SelfCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct ProcCpu {
  double self_s = 0;      // utime + stime
  double children_s = 0;  // cutime + cstime: children it waited for (tc, ip)
};

// /proc/PID/stat fields 14-17, in seconds.
inline ProcCpu ReadProcCpu(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(text.substr(close + 2));
  std::vector<std::string> f;
  for (std::string x; rest >> x;) f.push_back(x);
  // rest starts at field 3 (state): field n is f[n - 3]
  if (f.size() < 15) return {};
  double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return {(std::stod(f[11]) + std::stod(f[12])) / tick,
          (std::stod(f[13]) + std::stod(f[14])) / tick};
}

// A line of /proc/PID/status in KiB ("VmRSS", "VmHWM"); 0 when missing.
inline long ProcStatusKib(int pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) == 0) return std::atol(line.c_str() + key.size() + 1);
  }
  return 0;
}

// A child started with argv, its stdout on a pipe we read lines from.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // a killed bench takes its fleet with it
      dup2(fds[1], 1);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];
  }
  ~Child() { Stop(); }
  int pid() const { return pid_; }

  // Waits up to timeout for a line of stdout containing `text`.
  bool WaitFor(const std::string& text, std::chrono::seconds timeout) {
    auto end = SteadyClock::now() + timeout;
    while (SteadyClock::now() < end) {
      auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        if (line.find(text) != std::string::npos) return true;
        continue;
      }
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = -1;
          return false;
        }
        continue;
      }
      char b[4096];
      ssize_t n = read(out_, b, sizeof(b));
      if (n <= 0) return false;
      buf_.append(b, static_cast<size_t>(n));
    }
    return false;
  }

  // SIGTERM, then SIGKILL after 30 s; returns the exit status.
  int Stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 300; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      usleep(100000);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  int pid_ = -1;
  int out_ = -1;
  std::string buf_;
};

}  // namespace fdrill::bench
