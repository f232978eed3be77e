#include "agents/listen.h"

namespace fdrill {

Status ListenTcp(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host, uint16_t port,
                 const std::string& flag, const std::string& prefix) {
  using tcp = boost::asio::ip::tcp;
  boost::system::error_code ec;
  auto addr = boost::asio::ip::make_address(host, ec);
  if (ec) return InvalidArgument(flag + ": bad address \"" + host + "\"");
  tcp::endpoint ep(addr, port);
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Unavailable(prefix + "cannot listen on " + host + ":" + std::to_string(port) + ": " +
                       ec.message());
  return Status::Ok();
}

uint16_t ListeningPort(const boost::asio::ip::tcp::acceptor& acceptor) {
  boost::system::error_code ec;
  auto ep = acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

boost::asio::awaitable<std::optional<boost::asio::ip::tcp::socket>> AcceptNext(
    boost::asio::ip::tcp::acceptor& acceptor) {
  namespace asio = boost::asio;
  while (acceptor.is_open()) {
    boost::system::error_code ec;
    asio::ip::tcp::socket socket =
        co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) co_return std::move(socket);
    if (!acceptor.is_open()) break;
    asio::steady_timer backoff(acceptor.get_executor(), std::chrono::milliseconds(100));
    co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return std::nullopt;
}

}  // namespace fdrill
