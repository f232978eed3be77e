// A table of a fault's own in nftables, as the nftables injectors use it
// (port_loss: `bridge fdrill_loss_<port>`; link_loss's egress:
// `netdev fdrill_loss_<hash>`).
#pragma once

#include <string>

#include "harness/core/result.h"
#include "harness/host/host.h"

namespace fdrill {

// Whether `nft list table FAMILY TABLE` finds it: it exits 1 with "No such
// file or directory" for a table that is not there. Any other failure is an
// error naming the command, prefixed by `who`.
Result<bool> NftTableExists(ProcessRunner& runner, const std::string& family,
                            const std::string& table, const std::string& who);

}  // namespace fdrill
