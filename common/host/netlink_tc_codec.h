// The rtnetlink messages for a NetChange, and a dumped qdisc's options read
// back: the codec under NetlinkNetStack (netlink_net_stack.h says what the
// messages are and how they differ from tc's).
#pragma once

#include <linux/rtnetlink.h>

#include <string>
#include <string_view>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/net_stack.h"
#include "common/host/rtnl_socket.h"

namespace fdrill {

// A tcmsg for interface `ifindex` (0: every one) with handle and parent.
tcmsg TcMessage(int ifindex, uint32_t handle, uint32_t parent);
// The request for one NetChange on interface `ifindex` (exposed for tests:
// the bytes tc would send, field by field); a neighbour's is
// netlink_neigh_codec.h's.
Result<NlMessage> EncodeNetChange(const NetChange& change, int ifindex);
// A qdisc's options as fdrill compares them (net_stack.h), from the
// TCA_OPTIONS payload of a dumped qdisc of `kind`.
Json DecodeQdiscOptions(const std::string& kind, std::string_view options);

}  // namespace fdrill
