// AgentServer: the agent's network face. One io_context, one thread: an
// acceptor coroutine, per connection a reader and a writer coroutine with one
// write queue, and a ticker that calls AgentService::Tick every 20 ms. Pushes
// from the service go to every connected session. Frames over the size limit
// or that do not decode close that connection only; the agent keeps serving.
#pragma once

#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
#include <memory>
#include <set>
#include <string>

#include "agents/agent_service.h"

namespace fdrill {

class AgentSession;

class AgentServer {
 public:
  AgentServer(boost::asio::io_context& io, AgentService& service);
  // Binds host:port; fails with the address in the message.
  Status Listen(const std::string& host, uint16_t port);
  void Start();
  void StopAccepting();

 private:
  friend class AgentSession;
  boost::asio::awaitable<void> AcceptLoop();
  boost::asio::awaitable<void> TickLoop();
  void Broadcast(const Json& msg);

  boost::asio::io_context& io_;
  AgentService& service_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::set<std::shared_ptr<AgentSession>> sessions_;
};

}  // namespace fdrill
