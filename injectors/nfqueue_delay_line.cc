// The NFQUEUE delay line on libnetfilter_queue (see nfqueue_delay_line.h).
// One thread per line: it waits in ppoll on the queue socket and an eventfd
// (the stop signal) until the head packet's release time, reads every
// pending queue message (each ends up in OnPacket through
// nfq_handle_packet), and issues NF_ACCEPT for the packets that are due.
#include "injectors/nfqueue_delay_line.h"

// clang-format off
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
// clang-format on
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <random>
#include <thread>

namespace fdrill {

namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

// Packets held at once before the kernel fails open: 20 ms at ~200k pkt/s.
constexpr uint32_t kQueueMaxLen = 4096;
// META messages are ~100 bytes; a large socket buffer rides out bursts
// (past it, NFQA_CFG_F_FAIL_OPEN lets packets through undelayed).
constexpr int kSocketBuffer = 4 << 20;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

class NfqueueDelayLine final : public DelayLine {
 public:
  ~NfqueueDelayLine() override { Stop(); }

  Status Start(const DelayLineConfig& config) override {
    if (handle_)
      return FailedPrecondition("delay line on queue " + std::to_string(config_.queue) +
                                " already runs");
    config_ = config;
    draining_ = false;
    rng_.seed(config.queue);  // deterministic jitter per queue
    if (Status s = Open(); !s.ok()) {
      Close();
      return s;
    }
    thread_ = std::thread([this] { Run(); });
    return Status::Ok();
  }

  void Stop() override {
    if (thread_.joinable()) {
      uint64_t one = 1;
      (void)!write(wake_fd_, &one, sizeof(one));
      thread_.join();
    }
    Close();
  }

  std::optional<uint32_t> PortId() const override { return port_id_; }

 private:
  struct Held {
    uint32_t id;
    SteadyTime release;
  };

  Status Open() {
    std::string q = "NFQUEUE " + std::to_string(config_.queue);
    handle_ = nfq_open();
    if (!handle_) return Unavailable(Errno(q + ": cannot open an nfnetlink socket"));
    nfnl_rcvbufsiz(nfq_nfnlh(handle_), kSocketBuffer);
    queue_ = nfq_create_queue(handle_, config_.queue, &NfqueueDelayLine::OnPacket, this);
    if (!queue_) {
      // The kernel answers EPERM when another socket holds the queue
      // (nfqnl_recv_config), and also without CAP_NET_ADMIN.
      if (errno == EPERM || errno == EBUSY) {
        return FailedPrecondition(
            Errno(q + " is bound by another process, or binding needs CAP_NET_ADMIN"));
      }
      return Unavailable(Errno("cannot bind " + q));
    }
    if (nfq_set_mode(queue_, NFQNL_COPY_META, 0) < 0)
      return Unavailable(Errno(q + ": cannot set copy mode META"));
    if (nfq_set_queue_maxlen(queue_, kQueueMaxLen) < 0)
      return Unavailable(Errno(q + ": cannot set the queue length"));
    if (nfq_set_queue_flags(queue_, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN) < 0) {
      return Unavailable(Errno(q + ": cannot set fail-open"));
    }
    wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) return Unavailable(Errno(q + ": eventfd"));
    port_id_ = nfnl_portid(nfq_nfnlh(handle_));
    return Status::Ok();
  }

  void Close() {
    if (queue_) nfq_destroy_queue(queue_);  // unbind: the kernel drops what is still queued
    if (handle_) nfq_close(handle_);
    if (wake_fd_ >= 0) close(wake_fd_);
    queue_ = nullptr;
    handle_ = nullptr;
    wake_fd_ = -1;
    port_id_.reset();
    held_.clear();
  }

  static int OnPacket(nfq_q_handle*, nfgenmsg*, nfq_data* data, void* self_ptr) {
    auto* self = static_cast<NfqueueDelayLine*>(self_ptr);
    nfqnl_msg_packet_hdr* hdr = nfq_get_msg_packet_hdr(data);
    if (!hdr) return 0;
    uint32_t id = ntohl(hdr->packet_id);
    if (self->draining_) {
      nfq_set_verdict(self->queue_, id, NF_ACCEPT, 0, nullptr);
      return 0;
    }
    SteadyTime release = std::chrono::steady_clock::now() + self->HoldFor();
    // Never overtake the packet ahead: a delay line keeps order.
    if (!self->held_.empty() && release < self->held_.back().release)
      release = self->held_.back().release;
    self->held_.push_back({id, release});
    return 0;
  }

  Duration HoldFor() {
    if (config_.jitter.count() == 0) return config_.delay;
    std::uniform_int_distribution<int64_t> u(-config_.jitter.count(), config_.jitter.count());
    return config_.delay + Duration(u(rng_));
  }

  // Reads every message waiting in the socket; each packet goes to OnPacket.
  void ReadPending() {
    int fd = nfq_fd(handle_);
    alignas(8) char buf[65536];
    while (true) {
      ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        nfq_handle_packet(handle_, buf, static_cast<int>(n));
        continue;
      }
      // ENOBUFS: the kernel could not deliver some messages; with fail-open
      // it accepted those packets itself. Keep reading what did arrive.
      if (n < 0 && errno == ENOBUFS) continue;
      if (n < 0 && errno == EINTR) continue;
      return;  // EAGAIN: drained
    }
  }

  void ReleaseDue(SteadyTime now) {
    while (!held_.empty() && held_.front().release <= now) {
      nfq_set_verdict(queue_, held_.front().id, NF_ACCEPT, 0, nullptr);
      held_.pop_front();
    }
  }

  void Run() {
    pollfd fds[2] = {{nfq_fd(handle_), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    while (true) {
      timespec ts{};
      timespec* timeout = nullptr;
      if (!held_.empty()) {
        auto wait = std::max(Duration(0), held_.front().release - std::chrono::steady_clock::now());
        ts.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(wait).count();
        ts.tv_nsec = (wait - std::chrono::seconds(ts.tv_sec)).count();
        timeout = &ts;
      }
      int n = ppoll(fds, 2, timeout, nullptr);
      if (n < 0 && errno != EINTR) break;
      if (fds[1].revents & POLLIN) break;
      // POLLERR is a pending ENOBUFS: reading clears it (else ppoll spins).
      if (fds[0].revents & (POLLIN | POLLERR)) ReadPending();
      ReleaseDue(std::chrono::steady_clock::now());
    }
    // Stopping (the rule is already gone): let everything go, in order.
    ReleaseDue(SteadyTime::max());
    draining_ = true;
    ReadPending();
  }

  DelayLineConfig config_;
  nfq_handle* handle_ = nullptr;
  nfq_q_handle* queue_ = nullptr;
  int wake_fd_ = -1;
  std::optional<uint32_t> port_id_;
  std::thread thread_;
  // Owned by the packet thread while it runs.
  std::deque<Held> held_;
  std::mt19937_64 rng_;
  bool draining_ = false;
};

}  // namespace

std::unique_ptr<DelayLine> MakeNfqueueDelayLine() { return std::make_unique<NfqueueDelayLine>(); }

}  // namespace fdrill
