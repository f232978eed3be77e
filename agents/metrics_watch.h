// MetricsWatch: tells when a file in the metrics directory (the one
// MetricsTail follows) was written or created, so the agent pushes the
// ranks' records as soon as they reach the file instead of at its next
// 20 ms tail (the controller's impact detection waits on them; issue 25).
// An inotify instance with one watch (IN_MODIFY, IN_CREATE, IN_MOVED_TO) on
// the directory, not-blocking, for the server's io_context to wait on. What
// changed is not read: the tail finds out. inotify can be missing or out of
// instances (fs.inotify.max_user_instances); Open then fails and the 20 ms
// tail alone carries the records. Owns its descriptor; not thread-safe.
#pragma once

#include <string>

#include "common/core/result.h"

namespace fdrill {

class MetricsWatch {
 public:
  static Result<MetricsWatch> Open(const std::string& dir);
  MetricsWatch(MetricsWatch&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  MetricsWatch& operator=(MetricsWatch&&) = delete;
  MetricsWatch(const MetricsWatch&) = delete;
  ~MetricsWatch();

  // Gives the descriptor away (to an Asio stream_descriptor, which closes it).
  int Release();
  // Reads and forgets every pending event of `fd` (a released watch's);
  // true when there was at least one.
  static bool Drain(int fd);

 private:
  explicit MetricsWatch(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace fdrill
