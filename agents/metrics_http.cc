#include "agents/metrics_http.h"

#include <charconv>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "agents/listen.h"
#include "agents/prometheus.h"

namespace fdrill {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

MetricsHttpServer::MetricsHttpServer(asio::io_context& io, Render render)
    : io_(io), render_(std::move(render)), acceptor_(io) {}

Status MetricsHttpServer::Listen(const std::string& host, uint16_t port) {
  return ListenTcp(acceptor_, host, port, "--metrics-listen", "--metrics-listen: ");
}

uint16_t MetricsHttpServer::port() const { return ListeningPort(acceptor_); }

void MetricsHttpServer::Start() { asio::co_spawn(io_, AcceptLoop(), asio::detached); }

void MetricsHttpServer::Stop() {
  boost::system::error_code ec;
  acceptor_.close(ec);
}

asio::awaitable<void> MetricsHttpServer::AcceptLoop() {
  while (auto socket = co_await AcceptNext(acceptor_)) {
    if (connections_ >= kMaxConnections) {
      boost::system::error_code ec;
      socket->close(ec);  // a scraper needs one; a flood gets none
      continue;
    }
    ++connections_;
    asio::co_spawn(io_, Session(std::move(*socket)), asio::detached);
  }
}

asio::awaitable<void> MetricsHttpServer::Session(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer(kMaxHeaderBytes);  // its max size: a longer request fails to read
  boost::system::error_code ec;
  for (;;) {
    http::request_parser<http::empty_body> parser;
    parser.header_limit(kMaxHeaderBytes);
    stream.expires_after(timeout_);
    co_await http::async_read(stream, buffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;  // closed, timed out, too large, or not HTTP
    const auto& req = parser.get();
    http::response<http::string_body> res;
    res.version(req.version());
    res.set(http::field::server, "fdrill-agent");
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    const bool head = req.method() == http::verb::head;
    if (req.method() != http::verb::get && !head) {
      res.result(http::status::method_not_allowed);
      res.set(http::field::allow, "GET, HEAD");
      res.set(http::field::content_type, "text/plain; charset=utf-8");
      res.body() = "only GET and HEAD\n";
    } else if (target != "/metrics") {
      res.result(http::status::not_found);
      res.set(http::field::content_type, "text/plain; charset=utf-8");
      res.body() = "not found; metrics are at /metrics\n";
    } else {
      res.result(http::status::ok);
      res.set(http::field::content_type, kPrometheusContentType);
      res.body() = render_();
    }
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    if (head) res.body().clear();  // Content-Length stays that of the GET
    stream.expires_after(timeout_);
    co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !res.keep_alive()) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream.close();
  --connections_;
}

Result<std::pair<std::string, uint16_t>> ParseListenAddress(const std::string& text,
                                                            const std::string& flag) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return InvalidArgument(flag + " " + text + ": expected ADDRESS:PORT");
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  const char* b = text.data() + colon + 1;
  const char* e = text.data() + text.size();
  auto [p, ec] = std::from_chars(b, e, port);
  if (ec != std::errc() || p != e || b == e || port > 65535) {
    return InvalidArgument(flag + " " + text + ": bad port");
  }
  boost::system::error_code bad;
  asio::ip::make_address(host, bad);
  if (bad) return InvalidArgument(flag + " " + text + ": bad address \"" + host + "\"");
  return std::make_pair(host, static_cast<uint16_t>(port));
}

}  // namespace fdrill
