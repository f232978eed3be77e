// Param shapes ParamReader does not read itself: a percentage (number or
// "0.5%"), IPv4 addresses and lists of them. Every error names the key
// ("params.percent: ..."). Each helper marks its key as read, so
// ParamReader::Finish() accepts it and suggests it for typos.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "injectors/params.h"

namespace fdrill {

// A percentage in millionths of a percent (1 % = 1'000'000), so 0.5 and
// "0.5%" are exact. Accepts an integer, a JSON number or a string with an
// optional trailing '%', at most six decimals; required; accepted
// 0.000001..100 ("params.percent: percentage 150 is out of range: accepted
// 0.000001..100").
Result<uint64_t> ReadPercent(ParamReader& p, const Json& params, const std::string& key);

// "0.015" for 1.5 %: the probability iptables' statistic match takes,
// written exactly (no binary floating point in between).
std::string PercentToProbability(uint64_t micro_percent);
// "1.5%" for messages and plans.
std::string FormatPercent(uint64_t micro_percent);

// An IPv4 address or CIDR prefix ("198.18.0.2", "198.18.0.0/24").
Status CheckIpv4(const std::string& key, const std::string& text);
// Optional: nullopt when the key is absent.
Result<std::optional<std::string>> ReadIpv4(ParamReader& p, const Json& params,
                                            const std::string& key);
// Required, non-empty: a list of addresses, or one string of them separated
// by commas. Duplicates are an error (they would make two identical rules).
Result<std::vector<std::string>> ReadIpv4List(ParamReader& p, const Json& params,
                                              const std::string& key);

// The traffic a per-interface netfilter fault (link_loss, link_delay) acts
// on: params.direction, egress (the default) or ingress, and params.peer, an
// optional IPv4 address or prefix, read in that order.
struct PeerDirection {
  bool egress = true;
  std::optional<std::string> peer;
  // The iptables match for the peer: {"-d", PEER} on egress, {"-s", PEER}
  // on ingress; empty without a peer.
  std::vector<std::string> PeerMatch() const;
};
Result<PeerDirection> ReadPeerDirection(ParamReader& p, const Json& params);

// Reads an integer given as a JSON integer or a string in decimal or 0x-hex
// ("0x1a"), as sysfs and IB tools print LIDs. nullopt when absent.
Result<std::optional<int64_t>> ReadIntOrHex(ParamReader& p, const Json& params,
                                            const std::string& key, int64_t min, int64_t max);

}  // namespace fdrill
