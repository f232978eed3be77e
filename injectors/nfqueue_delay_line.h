// DelayLine: holds the packets of one netfilter queue for a fixed time, then
// lets them go on (NF_ACCEPT), in arrival order. link_delay's mechanism on
// kernels without sch_netem (fault-mechanisms §1.2).
//
// The real one (MakeNfqueueDelayLine) runs in the calling process, on a
// thread of its own, through Debian's libnetfilter_queue:
//   Start()  opens an nfnetlink socket in the calling thread's network
//            namespace, binds queue `queue` (the kernel refuses a queue that
//            another socket holds), asks for packet metadata only
//            (NFQNL_COPY_META: no payload is copied to us), sets
//            NFQA_CFG_F_FAIL_OPEN (a full queue or socket passes packets
//            instead of dropping them), then starts the thread. Each packet
//            is stamped on arrival and released at arrival + delay + a
//            uniform draw in [-jitter, +jitter], but never before the packet
//            ahead of it: order per queue is preserved, as on a wire.
//   Stop()   accepts every held packet and any still waiting in the socket,
//            unbinds the queue (the kernel DROPs whatever is still queued at
//            unbind, so the flush comes first), and joins the thread. Safe
//            twice and without Start. Call it after the NFQUEUE rule is gone,
//            so no new packet arrives while it flushes.
//   PortId() the netlink port id the kernel shows in the second column of
//            /proc/net/netfilter/nfnetlink_queue for our queue; the kernel's
//            autobind makes it the process id for a process's first netlink
//            socket. nullopt when not started.
// Start/Stop/PortId are called from one thread (the agent's); the packet
// thread touches only its own state.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/core/units.h"
#include "common/host/host.h"
#include "injectors/injector.h"

namespace fdrill {

struct DelayLineConfig {
  uint16_t queue = 0;
  Duration delay{};
  Duration jitter{};  // <= delay: a packet is never released before it arrived
};

class DelayLine {
 public:
  virtual ~DelayLine() = default;
  virtual Status Start(const DelayLineConfig& config) = 0;
  virtual void Stop() = 0;
  virtual std::optional<uint32_t> PortId() const = 0;
};

using DelayLineMaker = std::function<std::unique_ptr<DelayLine>()>;

// Constructing touches nothing; Start opens the socket.
std::unique_ptr<DelayLine> MakeNfqueueDelayLine();

// link_delay (link_delay.cc) with the delay line `make_line` builds; the
// registry passes MakeNfqueueDelayLine, tests a recording fake.
Result<std::unique_ptr<Fault>> MakeLinkDelayWith(const Json& params, Host host,
                                                 DelayLineMaker make_line);

}  // namespace fdrill
