#include "bench/flap_wire.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

namespace fdrill::bench {

namespace {

// This thread into network namespace /run/netns/NS; false with a message.
bool Enter(const std::string& ns) {
  const std::string path = "/run/netns/" + ns;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "flap_wire: enter %s: %s\n", path.c_str(), std::strerror(errno));
    if (fd >= 0) close(fd);
    return false;
  }
  close(fd);
  return true;
}

// A UDP socket made inside `ns` (a socket keeps the namespace it was made in).
int UdpIn(const std::string& ns) {
  int fd = -1;
  std::thread t([&] {
    if (Enter(ns)) fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  });
  t.join();
  return fd;
}

// Now, on the clock SO_TIMESTAMPNS stamps receive times with.
int64_t RealtimeNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

bool WireProbe::Start() {
  int rx = UdpIn(s_.receiver_ns), tx = UdpIn(s_.sender_ns);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(s_.port);
  const int on = 1;
  timeval wait{0, 50'000};  // the receiver checks for Stop this often
  bool ok = rx >= 0 && tx >= 0 && inet_pton(AF_INET, s_.to.c_str(), &at.sin_addr) == 1 &&
            setsockopt(rx, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) == 0 &&
            setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) == 0 &&
            bind(rx, reinterpret_cast<sockaddr*>(&at), sizeof(at)) == 0 &&
            connect(tx, reinterpret_cast<sockaddr*>(&at), sizeof(at)) == 0;
  if (!ok) {
    std::fprintf(stderr, "flap_wire: sockets to %s:%u: %s\n", s_.to.c_str(), s_.port,
                 std::strerror(errno));
    if (rx >= 0) close(rx);
    if (tx >= 0) close(tx);
    return false;
  }
  times_.reserve(1 << 20);
  sent_.reserve(1 << 20);
  receiver_ = std::thread([this, rx] { Receive(rx); });
  sender_ = std::thread([this, tx] { Send(tx); });
  return true;
}

void WireProbe::Stop() {
  stop_ = true;
  if (sender_.joinable()) sender_.join();
  if (receiver_.joinable()) receiver_.join();
}

void WireProbe::Receive(int fd) {
  char data[64];
  char control[CMSG_SPACE(sizeof(timespec))];
  while (!stop_) {
    iovec iov{data, sizeof(data)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    if (recvmsg(fd, &msg, 0) < 0) continue;  // the timeout: look at stop_
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        timespec ts;
        std::memcpy(&ts, CMSG_DATA(c), sizeof(ts));
        times_.push_back(int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec);
      }
    }
  }
  close(fd);
}

void WireProbe::Send(int fd) {
  const sched_param rt{.sched_priority = 1};
  realtime_ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) == 0;
  timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  const int64_t step = s_.interval.count();
  const char byte = 'f';
  while (!stop_) {
    // While the link is down the send fails (no route): the gap is the flap.
    const bool taken = send(fd, &byte, 1, MSG_DONTWAIT) >= 0;
    if (sent_.size() < sent_.capacity()) sent_.push_back({RealtimeNs(), taken});
    next.tv_nsec += step;
    while (next.tv_nsec >= 1'000'000'000) {
      next.tv_nsec -= 1'000'000'000;
      ++next.tv_sec;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
  }
  close(fd);
}

std::vector<WireFlap> WireProbe::Flaps(Duration at_least) const {
  std::vector<WireFlap> out;
  for (size_t i = 1; i < times_.size(); ++i) {
    const int64_t gap = times_[i] - times_[i - 1];
    if (gap < at_least.count()) continue;
    WireFlap f;
    f.gap_ms = static_cast<double>(gap) / 1e6;
    // The sender's first refused send after the last datagram before the
    // gap was sent (it reached the peer at times_[i - 1], after it left).
    auto it = std::partition_point(sent_.begin(), sent_.end(),
                                   [&](const Attempt& a) { return a.at < times_[i - 1]; });
    while (it != sent_.end() && it->taken && it->at < times_[i]) ++it;
    if (it != sent_.end() && it != sent_.begin() && it->at < times_[i]) {
      f.down_pause_ms = static_cast<double>(it->at - std::prev(it)->at) / 1e6;
      auto up = it;
      while (up != sent_.end() && !up->taken) ++up;
      if (up != sent_.end()) {
        f.up_pause_ms = static_cast<double>(up->at - std::prev(up)->at) / 1e6;
        f.sender_seen = true;
      }
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace fdrill::bench
