#include "bench/fanout_floor.h"

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it
#include <vector>

#include <boost/asio.hpp>

#include "bench/bench_util.h"

namespace fdrill::bench {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr size_t kWindow = 256;  // as ConnectAll (harness/controller/connect_all.h)
constexpr size_t kFrame = 200;   // about an apply request's size

asio::awaitable<void> Echo(tcp::socket s) {
  char buf[4096];
  try {
    for (;;) {
      size_t n = co_await s.async_read_some(asio::buffer(buf), asio::use_awaitable);
      co_await asio::async_write(s, asio::buffer(buf, n), asio::use_awaitable);
    }
  } catch (const std::exception&) {
  }
}

asio::awaitable<void> Accept(tcp::acceptor& acceptor) {
  for (;;) {
    tcp::socket s = co_await acceptor.async_accept(asio::use_awaitable);
    s.set_option(tcp::no_delay(true));
    asio::co_spawn(acceptor.get_executor(), Echo(std::move(s)), asio::detached);
  }
}

}  // namespace

int RunEchoServer(uint16_t port) {
  asio::io_context io;
  tcp::acceptor acceptor(io);
  boost::system::error_code ec;
  tcp::endpoint at(asio::ip::make_address("127.0.0.1"), port);
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(4096, ec);
  if (ec) {
    std::fprintf(stderr, "echo server on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
    return 2;
  }
  asio::signal_set stop(io, SIGTERM, SIGINT);
  stop.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
  asio::co_spawn(io, Accept(acceptor), asio::detached);
  std::printf("echo ready\n");
  std::fflush(stdout);
  io.run();
  return 0;
}

Floor MeasureFloor(const std::string& self, uint16_t port, int n, int rounds) {
  Floor out;
  Child peer({self, "--echo-server", std::to_string(port)});
  if (!peer.WaitFor("echo ready", std::chrono::seconds(30))) {
    out.error = "the echo peer did not start";
    return out;
  }
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  std::vector<std::unique_ptr<tcp::socket>> socks;
  for (int i = 0; i < n; ++i) socks.push_back(std::make_unique<tcp::socket>(io));
  const tcp::endpoint to(asio::ip::make_address("127.0.0.1"), port);

  std::mutex mu;
  std::condition_variable cv;
  size_t in_flight = 0, failed = 0;
  auto t0 = SteadyClock::now();
  for (int i = 0; i < n; ++i) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return in_flight < kWindow; });
      ++in_flight;
    }
    socks[i]->async_connect(to, [&, i](const boost::system::error_code& e) {
      if (!e) socks[i]->set_option(tcp::no_delay(true));
      std::lock_guard<std::mutex> lock(mu);
      if (e) ++failed;
      --in_flight;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return in_flight == 0; });
  }
  out.connect_s = Ms(SteadyClock::now() - t0) / 1000;
  if (failed > 0) {
    out.error = std::to_string(failed) + " TCP connects to the echo peer failed";
  } else {
    // Each round: a frame to every peer at once, then every echo back.
    const std::string frame(kFrame, 'x');
    std::vector<std::string> bufs(n, std::string(kFrame, '\0'));
    std::vector<double> totals;
    size_t left = 0;  // outlives a round that gave up: its late echoes still land here
    for (int r = 0; r < rounds && failed == 0; ++r) {
      {
        std::lock_guard<std::mutex> lock(mu);
        left = n;
      }
      auto start = SteadyClock::now();
      asio::post(io, [&] {
        for (int i = 0; i < n; ++i) {
          asio::async_write(*socks[i], asio::buffer(frame), [](auto, auto) {});
          asio::async_read(*socks[i], asio::buffer(bufs[i]),
                           [&](const boost::system::error_code& e, size_t) {
                             std::lock_guard<std::mutex> lock(mu);
                             if (e) ++failed;
                             if (--left == 0) cv.notify_all();
                           });
        }
      });
      std::unique_lock<std::mutex> lock(mu);
      if (!cv.wait_for(lock, std::chrono::seconds(60), [&] { return left == 0; })) {
        out.error = "echo round " + std::to_string(r) + ": no echo within 60 s";
        failed = 1;
        break;
      }
      totals.push_back(Ms(SteadyClock::now() - start));
    }
    if (failed == 0) {
      out.echo_p50_ms = Percentile(totals, 50);
      out.echo_p99_ms = Percentile(totals, 99);
      out.ok = true;
    } else if (out.error.empty()) {
      out.error = "an echo failed";
    }
  }
  asio::post(io, [&] {
    for (auto& s : socks) {
      boost::system::error_code ignored;
      s->close(ignored);
    }
  });
  work.reset();
  io_thread.join();
  peer.Stop();
  return out;
}

}  // namespace fdrill::bench
