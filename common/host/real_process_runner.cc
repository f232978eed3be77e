#include "common/host/real_process_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "common/host/programs.h"

namespace fdrill {

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\"'$\\") == std::string::npos;
    out += plain ? a : "'" + a + "'";
  }
  return out;
}

Result<std::string> RunChecked(ProcessRunner& runner, const std::vector<std::string>& argv,
                               Duration timeout) {
  auto r = runner.Run(argv, timeout);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    std::string err = r->err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    return FailedPrecondition("`" + JoinArgv(argv) + "` exited " + std::to_string(r->exit_code) +
                              (err.empty() ? "" : ": " + err));
  }
  return std::move(r->out);
}

Status RunEachChecked(ProcessRunner& runner, const std::vector<std::vector<std::string>>& steps,
                      const std::string& who, Duration timeout) {
  for (const auto& argv : steps) {
    auto r = RunChecked(runner, argv, timeout);
    if (!r.ok()) return r.status().Annotate(who);
  }
  return Status::Ok();
}

Result<ProcessResult> RealProcessRunner::Run(const std::vector<std::string>& argv,
                                             Duration timeout) {
  if (argv.empty()) return InvalidArgument("empty argv");
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Internal(std::string("pipe: ") + strerror(errno));
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  // posix_spawnp, not fork: glibc spawns with CLONE_VM | CLONE_VFORK, so
  // the agent's page tables are not copied and its pages not write-protected
  // for copy-on-write on every `tc`/`ip` — the bulk of an idle agent's CPU
  // when it samples counters every second (docs/performance.md).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    if (rc == ENOENT || rc == ENOTDIR) return ProgramMissing(argv[0], strerror(rc));
    return Unavailable("cannot run " + argv[0] + ": " + strerror(rc));
  }
  close(out_pipe[1]);
  close(err_pipe[1]);

  ProcessResult result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int n = poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = read(fds[i].fd, buf, sizeof(buf));
      if (got > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return DeadlineExceeded("`" + JoinArgv(argv) + "` ran past " + FormatDuration(timeout) +
                            " and was killed");
  }
  if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exit_code = 128 + WTERMSIG(status);
  return result;
}

Result<std::string> RealSysFs::Read(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read " + path + ": " + strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status RealSysFs::Write(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  if (!out) return NotFound("cannot open " + path + ": " + strerror(errno));
  out << value;
  out.flush();
  if (!out) return FailedPrecondition("cannot write " + path + ": " + strerror(errno));
  return Status::Ok();
}

Status RealSysFs::WriteSecret(const std::string& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return NotFound("cannot open " + path + ": " + strerror(errno));
  // An existing file keeps its mode through open(2): made 0600 before a
  // byte of the secret is in it.
  Status s = fchmod(fd, 0600) == 0
                 ? Status::Ok()
                 : FailedPrecondition("chmod 0600 " + path + ": " + strerror(errno));
  for (size_t done = 0; s.ok() && done < value.size();) {
    const ssize_t n = write(fd, value.data() + done, value.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) s = FailedPrecondition("cannot write " + path + ": " + strerror(errno));
    if (n > 0) done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 && s.ok())
    s = FailedPrecondition("cannot write " + path + ": " + strerror(errno));
  return s;
}

bool RealSysFs::Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

Status RealSysFs::MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  return Unavailable("mkdir " + path + ": " + std::strerror(errno));
}

Status RealSysFs::RemoveFile(const std::string& path) {
  if (unlink(path.c_str()) == 0 || errno == ENOENT) return Status::Ok();
  return Unavailable("unlink " + path + ": " + std::strerror(errno));
}

Status RealSysFs::RemoveDir(const std::string& path) {
  if (rmdir(path.c_str()) == 0 || errno == ENOENT) return Status::Ok();
  return Unavailable("rmdir " + path + ": " + std::strerror(errno));
}

Result<bool> RealSysFs::SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  const bool same = std::filesystem::equivalent(a, b, ec);
  if (ec) return NotFound("same file " + a + ", " + b + ": " + ec.message());
  return same;
}

Result<std::vector<std::string>> RealSysFs::List(const std::string& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
  if (!d) {
    std::string why = std::strerror(errno);
    if (errno == ENOENT || errno == ENOTDIR) return NotFound("cannot list " + dir + ": " + why);
    return Unavailable("cannot list " + dir + ": " + why);
  }
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = readdir(d.get())) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  if (errno != 0) return Unavailable("cannot list " + dir + ": " + std::strerror(errno));
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace fdrill
