// A table of a fault's own in nftables, as the nftables injectors use it
// (port_loss: `bridge fdrill_loss_<port>`; link_loss's egress:
// `netdev fdrill_loss_<hash>`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/host.h"

namespace fdrill {

// Whether `nft list table FAMILY TABLE` finds it: it exits 1 with "No such
// file or directory" for a table that is not there. Any other failure is an
// error naming the command, prefixed by `who`.
Result<bool> NftTableExists(ProcessRunner& runner, const std::string& family,
                            const std::string& table, const std::string& who);

// A random share of packets, as an nftables rule selects it: `numgen random
// mod 100000000 lt P`, P in millionths of a percent (so 1.5 % is exactly
// 1.5 %). At 100 % (kNftWhole) the rule selects everything and has no
// numgen words.
inline constexpr uint64_t kNftWhole = 100'000'000;
// Appends those words to RULE (nothing at 100 %).
void AppendNftShare(std::vector<std::string>& rule, uint64_t micro_percent);
// Whether MATCH, one `match` expression of `nft -j` output, is that numgen
// bound.
bool IsNftShare(const Json& match, uint64_t micro_percent);

}  // namespace fdrill
