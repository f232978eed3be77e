// Opening an agent's TCP listener (the control plane's and /metrics'):
// ADDRESS must be a literal IP; SO_REUSEADDR so a restarted agent binds at
// once. `flag` names the setting in the bad-address error; `prefix` starts
// the cannot-listen one ("" or "--metrics-listen: "). ListeningPort is the
// port it holds (the kernel's pick after port 0), 0 while it holds none.
#pragma once

#include <string>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>

#include "harness/core/status.h"

namespace fdrill {

Status ListenTcp(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host, uint16_t port,
                 const std::string& flag, const std::string& prefix);

uint16_t ListeningPort(const boost::asio::ip::tcp::acceptor& acceptor);

}  // namespace fdrill
