#include "fabric/real_node_system.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "common/core/files.h"
#include "fabric/node_enter.h"

namespace fdrill {

namespace {

// Runs in the grandchild; reports a failure on `report` and exits.
[[noreturn]] void Fail(int report, const std::string& message) {
  ssize_t ignored = write(report, message.data(), message.size());
  (void)ignored;
  _exit(127);
}

[[noreturn]] void BecomeSpawned(const SpawnSpec& spec, int report) {
  setsid();
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
  if (!spec.netns_path.empty()) {
    if (Status s = EnterNode(spec.netns_path, spec.uts_path, spec.tmpdir, spec.files_root); !s.ok())
      Fail(report, s.message());
  }
  int in = open("/dev/null", O_RDONLY);
  int log = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (in < 0 || log < 0) Fail(report, "open " + spec.log_path + ": " + strerror(errno));
  dup2(in, 0);
  dup2(log, 1);
  dup2(log, 2);
  if (chdir("/") != 0) Fail(report, std::string("chdir /: ") + strerror(errno));
  // Descriptors the caller left inheritable must not leak into the agent.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  Fail(report, "exec " + spec.argv[0] + ": " + strerror(errno));
}

}  // namespace

Result<int> RealNodeSystem::Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return InvalidArgument("spawn: empty argv");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + strerror(errno));
  pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return Internal(std::string("fork: ") + strerror(errno));
  }
  if (child == 0) {
    close(fds[0]);
    pid_t grandchild = fork();
    if (grandchild == 0) BecomeSpawned(spec, fds[1]);
    int pid = grandchild;
    ssize_t ignored = write(fds[1], &pid, sizeof(pid));
    (void)ignored;
    _exit(grandchild < 0 ? 1 : 0);
  }
  close(fds[1]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  // The pipe reaches EOF when the grandchild has exec'd (close-on-exec) or died.
  std::string got;
  char buf[512];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n > 0)
      got.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(fds[0]);
  int pid = 0;
  if (got.size() < sizeof(pid)) return Internal("spawn " + spec.argv[0] + ": fork failed");
  std::memcpy(&pid, got.data(), sizeof(pid));
  if (pid <= 0) return Internal("spawn " + spec.argv[0] + ": fork failed");
  if (got.size() > sizeof(pid)) return FailedPrecondition(got.substr(sizeof(pid)));
  return pid;
}

bool RealNodeSystem::TcpConnects(const std::string& ip, int port, Duration timeout) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) return false;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    ok = true;
  } else if (errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int ms =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
    if (poll(&p, 1, ms) == 1) {
      int err = 0;
      socklen_t len = sizeof(err);
      ok = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
    }
  }
  close(fd);
  return ok;
}

void RealNodeSystem::SleepFor(Duration d) { std::this_thread::sleep_for(d); }

Status RealNodeSystem::AppendLine(const std::string& path, const std::string& line) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable("open " + path + ": " + strerror(errno));
  const std::string text = line + "\n";
  // One write with O_APPEND: the line lands whole after whatever the agent wrote.
  ssize_t n = write(fd, text.data(), text.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return Unavailable("write " + path + ": " + strerror(n < 0 ? err : EIO));
  return Status::Ok();
}

Status RealNodeSystem::ReplaceFile(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, text);
}

}  // namespace fdrill
