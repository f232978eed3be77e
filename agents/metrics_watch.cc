#include "agents/metrics_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fdrill {

Result<MetricsWatch> MetricsWatch::Open(const std::string& dir) {
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return Unavailable(std::string("inotify_init1: ") + std::strerror(errno));
  MetricsWatch watch(fd);
  if (inotify_add_watch(fd, dir.c_str(), IN_MODIFY | IN_CREATE | IN_MOVED_TO) < 0)
    return Unavailable("inotify_add_watch " + dir + ": " + std::strerror(errno));
  return watch;
}

MetricsWatch::~MetricsWatch() {
  if (fd_ >= 0) ::close(fd_);
}

int MetricsWatch::Release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

bool MetricsWatch::Drain(int fd) {
  // Room for many events (each a struct and a file name); one read takes
  // as many whole events as fit.
  alignas(inotify_event) char events[16 * 1024];
  bool any = false;
  for (;;) {
    const ssize_t n = ::read(fd, events, sizeof(events));
    if (n > 0) {
      any = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return any;  // EAGAIN: nothing more
  }
}

}  // namespace fdrill
