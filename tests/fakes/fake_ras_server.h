// A fake NCCL RAS endpoint on 127.0.0.1 (an ephemeral port), speaking the
// client protocol as NCCL 2.28.9 defines it (src/ras/client_support.cc,
// rasClientEventLoop and the status printers): line-based, client first;
// "CLIENT PROTOCOL n" -> "SERVER PROTOCOL 2"; "TIMEOUT n" -> "OK"; "STATUS"
// (any case) -> the report in three chunks, then close; anything else ->
// "ERROR: Unknown command X". The report is built from NCCL's own format
// strings (cited per line) for a job of `nodes` x `procs_per_node`
// processes with `missing` of them not answering and `dead` declared dead.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fdrill::testing {

struct FakeRasJob {
  int nodes = 2;
  int procs_per_node = 4;
  int missing = 0;  // alive, not answering (INCOMPLETE)
  int dead = 0;     // unreachable via the RAS network (DEAD)
  int timeouts = 0;
};

inline std::string Printf(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), fmt, args...);
  return buf;
}

// The three chunks of a text STATUS reply (client_support.cc:542-544,
// 599-606, 778, 1020, 1174-1177, 1213, 1225-1325, 1336-1359, 1396-1402).
inline std::vector<std::string> RasStatusChunks(const FakeRasJob& j) {
  const int total = j.nodes * j.procs_per_node;
  std::vector<std::string> chunks;
  chunks.push_back(std::string("NCCL version 2.28.9 compiled with CUDA 13.0\n") +
                   Printf("CUDA runtime version %d, driver version %d\n\n", 13000, 13000));
  chunks.push_back(
      std::string("Job summary\n===========\n\n") +
      "  Nodes  Processes         GPUs  Processes     GPUs\n"
      "(total)   per node  per process    (total)  (total)\n" +
      Printf("%7d  %9d  %11d  %9d  %7d\n", j.nodes, j.procs_per_node, 1, total, total) +
      "\nCommunicators...");
  const bool incomplete = j.missing + j.dead > 0;
  std::string rest = Printf(" (%.3fs)\n=============\n\n", 0.012);
  rest +=
      "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
      "    #  in group  per comm  per node  per comm  in group\n";
  rest += Printf("%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s\n", 0, 1, j.nodes,
                 std::to_string(j.procs_per_node).c_str(), total, total - j.missing - j.dead,
                 "RUNNING", incomplete ? "INCOMPLETE" : "OK");
  rest += "\nErrors\n======\n\n";
  auto process = [](int i) {
    return Printf("  Process %d on node %s managing GPU %d\n", 12345 + i,
                  ("10.0.0." + std::to_string(2 + i)).c_str(), i);
  };
  if (j.missing > 0) {
    rest += "INCOMPLETE\n";
    rest += Printf("  Missing communicator data from %d job process%s\n", j.missing,
                   j.missing > 1 ? "es" : "");
    for (int i = 0; i < j.missing; ++i) rest += process(i);
    rest += "\n";
  }
  if (j.dead > 0) {
    rest += "DEAD\n";
    rest += Printf("  %d job process%s considered dead (unreachable via the RAS network)\n", j.dead,
                   j.dead > 1 ? "es are" : " is");
    for (int i = 0; i < j.dead; ++i) rest += process(j.missing + i);
    rest += "\n";
  }
  if (incomplete) {
    rest += Printf("#%d-%d (%016lx) INCOMPLETE\n", 0, 0, 0xcf264af53edbe986ul);
    rest += Printf("  Missing communicator data from %d rank%s\n", j.missing + j.dead,
                   j.missing + j.dead > 1 ? "s" : "");
    rest += "\n";
  }
  rest += "Warnings\n========\n\n";
  if (j.timeouts > 0) {
    rest += "TIMEOUT\n";
    rest += Printf("  Encountered %d communication timeout%s while gathering communicator data\n\n",
                   j.timeouts, j.timeouts > 1 ? "s" : "");
  }
  chunks.push_back(rest);
  return chunks;
}

class FakeRasServer {
 public:
  FakeRasServer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    listen(listen_fd_, 16);
    socklen_t len = sizeof(a);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeRasServer() {
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    thread_.join();
  }
  int port() const { return port_; }
  void set_job(const FakeRasJob& job) {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = job;
  }
  // Every line the server received, in order, over every connection.
  std::vector<std::string> received() const {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }
  // Answer the handshake with this line instead (another service).
  void set_greeting(std::string line) {
    std::lock_guard<std::mutex> lock(mu_);
    greeting_ = std::move(line);
  }
  // Accept, then say nothing for 1.5 s (a stuck process).
  void set_silent(bool silent) { silent_ = silent; }

 private:
  void Serve() {
    while (!stop_) {
      int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      if (!silent_)
        Talk(c);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      close(c);
    }
  }
  void Send(int c, const std::string& s) { send(c, s.data(), s.size(), MSG_NOSIGNAL); }
  void Talk(int c) {
    std::string buf;
    char tmp[256];
    while (true) {
      size_t nl;
      while ((nl = buf.find('\n')) == std::string::npos) {
        ssize_t n = recv(c, tmp, sizeof(tmp), 0);
        if (n <= 0) return;
        buf.append(tmp, static_cast<size_t>(n));
      }
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::string upper = line;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      FakeRasJob job;
      std::string greeting;
      {
        std::lock_guard<std::mutex> lock(mu_);
        received_.push_back(line);
        job = job_;
        greeting = greeting_;
      }
      if (upper.rfind("CLIENT PROTOCOL", 0) == 0) {
        Send(c, greeting.empty() ? "SERVER PROTOCOL 2\n" : greeting + "\n");
      } else if (upper.rfind("TIMEOUT ", 0) == 0) {
        Send(c, "OK\n");
      } else if (upper == "STATUS" || upper == "VERBOSE STATUS") {
        for (const std::string& chunk : RasStatusChunks(job)) {
          Send(c, chunk);
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return;  // the server closes after the report
      } else {
        Send(c, "ERROR: Unknown command " + line + "\n");
      }
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> silent_{false};
  mutable std::mutex mu_;
  FakeRasJob job_;
  std::string greeting_;
  std::vector<std::string> received_;
  std::thread thread_;
};

}  // namespace fdrill::testing
