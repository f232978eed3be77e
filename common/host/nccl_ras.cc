#include "common/host/nccl_ras.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

namespace fdrill {

namespace {

// NCCL_RAS_CLIENT_PROTOCOL (src/ras/ras_internal.h).
constexpr char kHello[] = "CLIENT PROTOCOL 2\n";
constexpr char kStatus[] = "STATUS\n";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The leading integer of "  3 job processes are ..." or "Encountered 2 ...".
int LeadingNumber(std::string_view s) {
  s = Trim(s);
  int n = 0;
  std::from_chars(s.data(), s.data() + s.size(), n);
  return n;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// A file descriptor closed on every path.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

using Deadline = std::chrono::steady_clock::time_point;

int MsLeft(Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

Status WaitFor(int fd, short events, Deadline deadline, const std::string& who) {
  while (true) {
    pollfd p{.fd = fd, .events = events, .revents = 0};
    int n = poll(&p, 1, MsLeft(deadline));
    if (n > 0) return Status::Ok();
    if (n == 0) return DeadlineExceeded(who + ": no answer in time");
    if (errno != EINTR) return Unavailable(who + ": poll: " + std::strerror(errno));
  }
}

Status SendAll(int fd, std::string_view data, Deadline deadline, const std::string& who) {
  while (!data.empty()) {
    if (Status s = WaitFor(fd, POLLOUT, deadline, who); !s.ok()) return s;
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unavailable(who + ": send: " + std::strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// Reads until `until` returns true for what has arrived, or EOF.
Result<std::string> Receive(int fd, Deadline deadline, const std::string& who,
                            bool (*until)(const std::string&)) {
  std::string got;
  char buf[4096];
  while (until == nullptr || !until(got)) {
    if (Status s = WaitFor(fd, POLLIN, deadline, who); !s.ok()) return s;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unavailable(who + ": recv: " + std::strerror(errno));
    if (n == 0) break;
    got.append(buf, static_cast<size_t>(n));
    if (got.size() > (8u << 20)) return Unavailable(who + ": reply over 8 MiB");
  }
  return got;
}

Result<int> Connect(const RasAddress& a, Deadline deadline, const std::string& who) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(a.port);
  if (int rc = getaddrinfo(a.host.c_str(), port.c_str(), &hints, &res); rc != 0)
    return Unavailable(who + ": " + gai_strerror(rc));
  std::string last = "no address";
  int connected = -1;
  for (addrinfo* ai = res; ai != nullptr && connected < 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
      if (WaitFor(fd, POLLOUT, deadline, who).ok()) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      } else {
        errno = ETIMEDOUT;
      }
    }
    if (rc == 0) {
      connected = fd;
    } else {
      last = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(res);
  if (connected < 0)
    return Unavailable(who + ": " + last +
                       " (no NCCL job with RAS on this node, or "
                       "NCCL_RAS_ENABLE=0)");
  return connected;
}

}  // namespace

Result<RasAddress> RasAddressFromEnv(const std::map<std::string, std::string>& env) {
  RasAddress a;
  if (auto it = env.find("NCCL_RAS_ENABLE"); it != env.end()) {
    if (it->second != "0" && it->second != "1") {
      return InvalidArgument("NCCL_RAS_ENABLE: must be 0 or 1, not \"" + it->second + "\"");
    }
    a.enabled = it->second == "1";
  }
  auto it = env.find("NCCL_RAS_ADDR");
  if (it == env.end()) return a;
  const std::string& v = it->second;
  const size_t colon = v.rfind(':');
  std::string host = colon == std::string::npos ? "" : v.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  int port = 0;
  const std::string digits = colon == std::string::npos ? "" : v.substr(colon + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (host.empty() || digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
      port < 1 || port > 65535) {
    return InvalidArgument(
        "NCCL_RAS_ADDR: expected host:port or [ipv6]:port (e.g. "
        "localhost:28028), not \"" +
        v + "\"");
  }
  a.host = host;
  a.port = port;
  return a;
}

Result<RasStatus> ParseRasStatus(std::string_view text) {
  RasStatus st;
  enum class Section { kHead, kErrors, kWarnings } section = Section::kHead;
  bool saw_errors = false;
  // Which job-wide entry the "  Process ..." lines below belong to.
  std::vector<std::string>* processes = nullptr;
  for (std::string_view raw : Lines(text)) {
    const std::string_view line = Trim(raw);
    if (section == Section::kHead && StartsWith(line, "NCCL version ")) {
      std::string_view v = line.substr(std::strlen("NCCL version "));
      st.nccl_version = std::string(v.substr(0, v.find(' ')));
    }
    if (line == "Errors") {
      section = Section::kErrors;
      saw_errors = true;
      continue;
    }
    if (line == "Warnings") {
      section = Section::kWarnings;
      processes = nullptr;
      continue;
    }
    if (section == Section::kHead) continue;
    if (line.empty()) {
      processes = nullptr;
      continue;
    }
    if (section == Section::kWarnings) {
      if (StartsWith(line, "Encountered ")) {
        st.timeouts += LeadingNumber(line.substr(std::strlen("Encountered ")));
      } else if (line.front() == '#' && line.find(") ") != std::string_view::npos) {
        st.communicators.emplace_back(line);
      }
      continue;
    }
    // Errors: "DEAD" / "INCOMPLETE" open a job-wide entry; "#g-i (hash) X"
    // a communicator's.
    if (line == "DEAD") {
      processes = &st.dead_processes;
    } else if (line == "INCOMPLETE") {
      processes = &st.missing_processes;
    } else if (line.front() == '#') {
      st.communicators.emplace_back(line);
      processes = nullptr;
    } else if (processes == &st.dead_processes && line.find("considered dead") != line.npos) {
      st.dead += LeadingNumber(line);
    } else if (processes == &st.missing_processes &&
               StartsWith(line, "Missing communicator data from ")) {
      st.missing += LeadingNumber(line.substr(std::strlen("Missing communicator data from ")));
    } else if (processes != nullptr && StartsWith(line, "Process ")) {
      processes->emplace_back(line);
    }
  }
  if (!saw_errors) {
    return InvalidArgument("not an NCCL RAS status report (no \"Errors\" section): " +
                           std::string(Trim(text.substr(0, std::min<size_t>(text.size(), 80)))));
  }
  return st;
}

Json RasStatusJson(const RasStatus& s) {
  return {{"nccl_version", s.nccl_version},
          {"missing", s.missing},
          {"dead", s.dead},
          {"dead_processes", s.dead_processes},
          {"missing_processes", s.missing_processes},
          {"communicators", s.communicators},
          {"timeouts", s.timeouts}};
}

Result<std::string> QueryRasStatus(const RasAddress& address, Duration timeout) {
  const std::string who = "NCCL RAS at " + address.host + ":" + std::to_string(address.port);
  if (!address.enabled) return FailedPrecondition(who + ": off (NCCL_RAS_ENABLE=0)");
  const Deadline deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  auto fd = Connect(address, deadline, who);
  if (!fd.ok()) return fd.status();
  Fd owned{*fd};
  if (Status s = SendAll(owned.fd, kHello, deadline, who); !s.ok()) return s;
  auto hello = Receive(owned.fd, deadline, who,
                       [](const std::string& got) { return got.find('\n') != std::string::npos; });
  if (!hello.ok()) return hello.status();
  // The server answers "SERVER PROTOCOL 2" (client.cc compares case-blind).
  std::string first = hello->substr(0, hello->find('\n'));
  std::string upper = first;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!StartsWith(upper, "SERVER PROTOCOL ")) {
    return Unavailable(who + ": not NCCL RAS (answered \"" + first + "\" to CLIENT PROTOCOL)");
  }
  if (Status s = SendAll(owned.fd, kStatus, deadline, who); !s.ok()) return s;
  auto report = Receive(owned.fd, deadline, who, nullptr);  // to EOF
  if (!report.ok()) return report.status();
  // Anything after the handshake line that came in the same segment.
  return hello->substr(first.size() + 1) + *report;
}

}  // namespace fdrill
