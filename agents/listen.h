// Opening an agent's TCP listener (the control plane's and /metrics'):
// ADDRESS must be a literal IP; SO_REUSEADDR so a restarted agent binds at
// once. `flag` names the setting in the bad-address error; `prefix` starts
// the cannot-listen one ("" or "--metrics-listen: "). ListeningPort is the
// port it holds (the kernel's pick after port 0), 0 while it holds none.
// AcceptNext is both servers' accept: the next connection, or nullopt once
// the acceptor is closed; a failed accept (out of file descriptors and the
// like) waits 100 ms and tries again rather than spin on the loop.
#pragma once

#include <optional>
#include <string>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>

#include "common/core/status.h"

namespace fdrill {

Status ListenTcp(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host, uint16_t port,
                 const std::string& flag, const std::string& prefix);

uint16_t ListeningPort(const boost::asio::ip::tcp::acceptor& acceptor);

boost::asio::awaitable<std::optional<boost::asio::ip::tcp::socket>> AcceptNext(
    boost::asio::ip::tcp::acceptor& acceptor);

}  // namespace fdrill
