// A stand-in for fdrill-agent in the fabric e2e test: takes the agent's
// command line (--node N --listen IP:PORT --state-dir DIR), records where it
// runs (hostname, TMPDIR) in DIR/where.txt, then accepts TCP connections on
// IP:PORT and closes them until SIGTERM.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  std::string listen, state_dir;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--listen") listen = argv[i + 1];
    if (flag == "--state-dir") state_dir = argv[i + 1];
  }
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || state_dir.empty()) {
    std::fprintf(stderr, "usage: stand_in_agent --node N --listen IP:PORT --state-dir DIR\n");
    return 2;
  }
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const char* tmpdir = std::getenv("TMPDIR");
  std::ofstream(state_dir + "/where.txt")
      << "hostname=" << host << "\ntmpdir=" << (tmpdir ? tmpdir : "") << "\n";

  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(listen.c_str() + colon + 1)));
  if (inet_pton(AF_INET, listen.substr(0, colon).c_str(), &addr.sin_addr) != 1) return 2;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 16) != 0) {
    std::perror(("listen " + listen).c_str());
    return 1;
  }
  std::printf("stand-in agent listening on %s\n", listen.c_str());
  std::fflush(stdout);
  for (;;) {
    int c = accept(fd, nullptr, nullptr);
    if (c >= 0) close(c);
  }
}
