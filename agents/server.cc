#include "agents/server.h"

#include <deque>

#include <spdlog/spdlog.h>

namespace fdrill {

namespace asio = boost::asio;
using asio::ip::tcp;

class AgentSession : public std::enable_shared_from_this<AgentSession> {
 public:
  AgentSession(tcp::socket socket, AgentServer& server)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), server_(server) {
    timer_.expires_at(std::chrono::steady_clock::time_point::max());
    boost::system::error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    peer_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
  }

  void Start() {
    auto self = shared_from_this();
    asio::co_spawn(socket_.get_executor(), [self] { return self->Reader(); }, asio::detached);
    asio::co_spawn(socket_.get_executor(), [self] { return self->Writer(); }, asio::detached);
  }

  void Send(const Json& msg) {
    queue_.push_back(EncodeFrame(msg));
    timer_.cancel_one();
  }

  void Close() {
    boost::system::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    timer_.cancel();
  }

 private:
  asio::awaitable<void> Reader() {
    FrameDecoder decoder;
    char buf[16384];
    try {
      for (;;) {
        size_t n = co_await socket_.async_read_some(asio::buffer(buf), asio::use_awaitable);
        decoder.Feed(std::string_view(buf, n));
        for (;;) {
          auto msg = decoder.Next();
          if (!msg.ok()) {
            spdlog::warn("peer {}: {}; closing the connection", peer_, msg.status().message());
            Send(MakeErrorReply(0, msg.status()));
            closing_ = true;
            co_return;
          }
          if (!msg->has_value()) break;
          Send(server_.service_.Handle(**msg, peer_));
        }
      }
    } catch (const std::exception&) {
      // peer closed or reset
    }
    Finish();
  }

  asio::awaitable<void> Writer() {
    try {
      while (socket_.is_open()) {
        if (queue_.empty()) {
          if (closing_) break;
          boost::system::error_code ec;
          co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          continue;
        }
        std::string frame = std::move(queue_.front());
        queue_.pop_front();
        co_await asio::async_write(socket_, asio::buffer(frame), asio::use_awaitable);
      }
    } catch (const std::exception&) {
    }
    Finish();
  }

  void Finish() {
    if (finished_) return;
    if (closing_ && !queue_.empty()) {
      timer_.cancel_one();
      return;  // the writer drains the error reply, then finishes
    }
    finished_ = true;
    Close();
    server_.sessions_.erase(shared_from_this());
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  AgentServer& server_;
  std::deque<std::string> queue_;
  std::string peer_;
  bool closing_ = false;
  bool finished_ = false;
};

AgentServer::AgentServer(asio::io_context& io, AgentService& service)
    : io_(io), service_(service), acceptor_(io) {
  service_.set_push([this](Json msg) { Broadcast(msg); });
}

Status AgentServer::Listen(const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) return InvalidArgument("--listen: bad address \"" + host + "\"");
  tcp::endpoint ep(addr, port);
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Unavailable("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  return Status::Ok();
}

void AgentServer::Start() {
  asio::co_spawn(io_, AcceptLoop(), asio::detached);
  asio::co_spawn(io_, TickLoop(), asio::detached);
}

void AgentServer::StopAccepting() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  for (auto& s : std::set<std::shared_ptr<AgentSession>>(sessions_)) s->Close();
}

asio::awaitable<void> AgentServer::AcceptLoop() {
  while (acceptor_.is_open()) {
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (!acceptor_.is_open()) co_return;
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto session = std::make_shared<AgentSession>(std::move(socket), *this);
    sessions_.insert(session);
    session->Start();
  }
}

asio::awaitable<void> AgentServer::TickLoop() {
  asio::steady_timer timer(io_);
  auto next = std::chrono::steady_clock::now();
  while (acceptor_.is_open()) {
    next += std::chrono::milliseconds(20);
    timer.expires_at(next);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    service_.Tick();
  }
}

void AgentServer::Broadcast(const Json& msg) {
  for (auto& s : sessions_) s->Send(msg);
}

}  // namespace fdrill
