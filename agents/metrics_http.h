// MetricsHttpServer: the smallest HTTP/1.1 server Prometheus needs, on the
// agent's own io_context (Boost.Beast; one coroutine per connection, as the
// Beast examples do). GET or HEAD /metrics -> 200 with the render callback's
// body and kPrometheusContentType; any other path -> 404; any other method
// -> 405 (Allow: GET, HEAD). Keep-alive is honoured.
//
// It never blocks the agent loop: every read and write is asynchronous with
// a per-connection deadline (timeout(): a slow or idle client is closed),
// requests are bounded (kMaxHeaderBytes of headers, no body), and past
// kMaxConnections open connections a new one is closed at once. The render
// callback runs on the io thread, once per GET/HEAD. Plaintext, read-only:
// it exposes what the controller sees anyway and changes nothing.
//
// Lifetime: the server outlives io.run(); Stop() closes the listener.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>

#include "common/core/result.h"

namespace fdrill {

class MetricsHttpServer {
 public:
  using Render = std::function<std::string()>;
  static constexpr size_t kMaxHeaderBytes = 8 * 1024;
  static constexpr int kMaxConnections = 16;

  MetricsHttpServer(boost::asio::io_context& io, Render render);
  // Binds host:port (port 0: any free port); the message names the address.
  Status Listen(const std::string& host, uint16_t port);
  uint16_t port() const;
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  void Start();
  void Stop();

 private:
  boost::asio::awaitable<void> AcceptLoop();
  boost::asio::awaitable<void> Session(boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& io_;
  Render render_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::chrono::milliseconds timeout_{10000};
  int connections_ = 0;
};

// "ADDR:PORT" ("127.0.0.1:9477", "[::1]:9477", "0.0.0.0:9477"); errors name
// `flag`.
Result<std::pair<std::string, uint16_t>> ParseListenAddress(const std::string& text,
                                                            const std::string& flag);

}  // namespace fdrill
