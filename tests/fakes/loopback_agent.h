// LoopbackAgent: a pretend fdrill-agent on 127.0.0.1 (an ephemeral port),
// plaintext, speaking the wire protocol (common/wire/wire.h) from an io
// thread of its own, for the controller's socket half in unit tests —
// AgentLink, ConnectAll, ForEachAgent, DrillAgents, a whole drill — with no
// root, no namespaces and no TLS. Every request is recorded in the order it
// arrived and answered by `answer` (by default: hello names `node`, with
// its wall clock, tmpdir and hostname; a snapshot holds one link, fab0, up;
// anything else is {"verified": true});
// an answer of nullopt sends no reply at all. A test pushes messages to
// every connection, drops them all (the agent died) and listens again on the
// same port (it was restarted).
//
// Thread-safe; `answer` runs on the agent's io thread.
#pragma once

// clang-format off
#include <utility>  // Boost 1.74 awaitable.hpp uses std::exchange without it
#include <boost/asio.hpp>
// clang-format on

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/wire/protocol.h"
#include "common/wire/wire.h"

namespace fdrill {

class LoopbackAgent {
 public:
  using AnswerFn = std::function<std::optional<Result<Json>>(const Json& request)>;

  explicit LoopbackAgent(std::string node) : node_(std::move(node)) {
    answer_ = [this](const Json& request) -> std::optional<Result<Json>> {
      return DefaultAnswer(request);
    };
    work_.emplace(io_.get_executor());
    thread_ = std::thread([this] { io_.run(); });
  }
  ~LoopbackAgent() {
    Stop();
    work_.reset();  // every socket is closed: run() returns once their handlers ran
    thread_.join();
  }
  LoopbackAgent(const LoopbackAgent&) = delete;
  LoopbackAgent& operator=(const LoopbackAgent&) = delete;

  const std::string& node() const { return node_; }
  uint16_t port() const { return port_; }

  // Listens on 127.0.0.1:port (0: any free port; the same one again after
  // Stop, as a restarted agent does).
  Status Listen(uint16_t port = 0) {
    std::promise<Status> done;
    auto fut = done.get_future();
    boost::asio::post(io_, [this, port, &done] { done.set_value(ListenOnIo(port)); });
    return fut.get();
  }
  // Stops listening and closes every connection: the agent is gone.
  void Stop() {
    RunOnIo([this] { StopOnIo(); });
  }
  // Closes every connection and goes on listening.
  void DropAll() {
    RunOnIo([this] {
      for (auto& s : sessions_) s->Close();
      sessions_.clear();
    });
  }
  // `type`'s push (envelope id 0) to every connection.
  void Push(const std::string& type, Json body) {
    std::string frame = EncodeFrame(MakePush(type, std::move(body)));
    RunOnIo([this, &frame] {
      for (auto& s : sessions_) s->Send(frame);
    });
  }

  // ... without waiting for it to go: from inside `answer` too, where it
  // goes after the reply being answered.
  void PushLater(const std::string& type, Json body) {
    boost::asio::post(io_, [this, frame = EncodeFrame(MakePush(type, std::move(body)))] {
      for (auto& s : sessions_) s->Send(frame);
    });
  }
  // The agent dies and is started again on its port, once the request
  // being answered is: every connection closed, a new one accepted. From
  // inside `answer`.
  void RestartLater() {
    boost::asio::post(io_, [this] {
      const uint16_t port = port_;
      StopOnIo();
      (void)ListenOnIo(port);
    });
  }
  // Bytes as they are to every connection: a frame of the test's own.
  void SendRaw(const std::string& bytes) {
    RunOnIo([this, &bytes] {
      for (auto& s : sessions_) s->Send(bytes);
    });
  }

  void set_answer(AnswerFn f) {
    std::lock_guard<std::mutex> lock(mu_);
    answer_ = std::move(f);
  }
  // What this agent answers unless told otherwise.
  std::optional<Result<Json>> DefaultAnswer(const Json& request) const {
    if (RequestType(request) == proto::kHello) {
      return Json{{proto::key::kNode, node_},
                  {proto::key::kWallNs, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count()},
                  {proto::key::kTmpdir, "/tmp/" + node_},
                  {proto::key::kHostname, node_ + ".example"}};
    }
    if (RequestType(request) == proto::kSnapshot) {
      return Json{{proto::key::kLinks,
                   Json::array({{{proto::key::kName, "fab0"}, {proto::key::kAdminUp, true}}})}};
    }
    return Json{{"verified", true}};
  }

  // Every request so far (as it came: envelope and body), in order.
  std::vector<Json> Requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  // ... of TYPE.
  std::vector<Json> RequestsOf(const std::string& type) const {
    std::vector<Json> out;
    for (const Json& r : Requests()) {
      if (RequestType(r) == type) out.push_back(r);
    }
    return out;
  }
  // The types of every request so far, in order.
  std::vector<std::string> Types() const {
    std::vector<std::string> out;
    for (const Json& r : Requests()) out.push_back(RequestType(r));
    return out;
  }
  // Connections accepted so far (see AwaitAccepted).
  int accepted() const {
    std::lock_guard<std::mutex> lock(mu_);
    return accepted_;
  }
  // Waits until `n` connections have been accepted (a dial completes in the
  // kernel before the agent's accept runs), at most `within`; whether they were.
  bool AwaitAccepted(int n, std::chrono::milliseconds within = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, within, [&] { return accepted_ >= n; });
  }
  // Waits until `n` requests of TYPE have come, at most `within` (a bound
  // on a hang, not a measurement); whether they did.
  bool AwaitRequests(const std::string& type, size_t n,
                     std::chrono::milliseconds within = std::chrono::seconds(10)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, within, [&] {
      size_t seen = 0;
      for (const Json& r : requests_) seen += RequestType(r) == type ? 1 : 0;
      return seen >= n;
    });
  }

 private:
  struct Session : std::enable_shared_from_this<Session> {
    Session(LoopbackAgent& agent, boost::asio::ip::tcp::socket sock)
        : agent(agent), sock(std::move(sock)) {}
    void Read() {
      sock.async_read_some(boost::asio::buffer(buf),
                           [self = shared_from_this()](boost::system::error_code ec, size_t n) {
                             if (ec) return self->Close();
                             self->decoder.Feed(std::string_view(self->buf, n));
                             for (;;) {
                               auto msg = self->decoder.Next();
                               if (!msg.ok()) return self->Close();
                               if (!msg->has_value()) break;
                               self->agent.OnRequest(*self, **msg);
                             }
                             self->Read();
                           });
    }
    void Send(const std::string& frame) {
      if (!sock.is_open()) return;
      queue.push_back(frame);
      if (queue.size() == 1) Write();
    }
    void Write() {
      boost::asio::async_write(sock, boost::asio::buffer(queue.front()),
                               [self = shared_from_this()](boost::system::error_code ec, size_t) {
                                 if (ec) return self->Close();
                                 self->queue.erase(self->queue.begin());
                                 if (!self->queue.empty()) self->Write();
                               });
    }
    void Close() {
      boost::system::error_code ignored;
      sock.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
      sock.close(ignored);
    }
    LoopbackAgent& agent;
    boost::asio::ip::tcp::socket sock;
    FrameDecoder decoder;
    std::vector<std::string> queue;
    char buf[4096];
  };

  void Accept() {
    acceptor_->async_accept([this](boost::system::error_code ec, boost::asio::ip::tcp::socket s) {
      if (ec) return;  // closed: Stop
      auto session = std::make_shared<Session>(*this, std::move(s));
      sessions_.push_back(session);
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++accepted_;
      }
      cv_.notify_all();
      session->Read();
      Accept();
    });
  }
  void OnRequest(Session& s, const Json& request) {
    AnswerFn answer;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
      answer = answer_;
    }
    cv_.notify_all();
    const std::optional<Result<Json>> reply = answer(request);
    if (!reply) return;
    const uint64_t id = RequestId(request);
    s.Send(EncodeFrame(reply->ok() ? MakeReply(id, **reply) : MakeErrorReply(id, reply->status())));
  }
  Status ListenOnIo(uint16_t port) {
    namespace ip = boost::asio::ip;
    boost::system::error_code ec;
    acceptor_ = std::make_unique<ip::tcp::acceptor>(io_);
    const ip::tcp::endpoint at(ip::make_address("127.0.0.1"), port);
    acceptor_->open(at.protocol(), ec);
    if (!ec) acceptor_->set_option(ip::tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_->bind(at, ec);
    if (!ec) acceptor_->listen(16, ec);
    if (ec) return Unavailable("listen: " + ec.message());
    port_ = acceptor_->local_endpoint().port();
    Accept();
    return Status::Ok();
  }
  void StopOnIo() {
    if (acceptor_) {
      boost::system::error_code ignored;
      acceptor_->close(ignored);
      acceptor_.reset();
    }
    for (auto& s : sessions_) s->Close();
    sessions_.clear();
  }
  // Runs `f` on the io thread and waits for it.
  template <typename F>
  void RunOnIo(F f) {
    std::promise<void> done;
    auto fut = done.get_future();
    boost::asio::post(io_, [&] {
      f();
      done.set_value();
    });
    fut.wait();
  }

  const std::string node_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread thread_;
  // io thread only.
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::vector<std::shared_ptr<Session>> sessions_;
  std::atomic<uint16_t> port_{0};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  AnswerFn answer_;
  std::vector<Json> requests_;
  int accepted_ = 0;
};

}  // namespace fdrill
