// fdrill-burn: the load behind cpu_hog and mem_pressure
// (injectors/burn_process.h). Started by fdrill-agent only:
//   fdrill-burn cpu THREADS PARENT_PID   spin THREADS threads
//   fdrill-burn mem BYTES PARENT_PID     allocate BYTES, touch every page, hold
// It dies with its parent (PR_SET_PDEATHSIG SIGKILL) and exits at once if
// PARENT_PID is not its parent (the parent died before the prctl took hold).
// Runs until killed. Exit 2 on bad arguments, 3 when memory is refused.
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void Spin() {
  volatile unsigned long long x = 0;
  for (;;) x = x + 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: fdrill-burn cpu THREADS PARENT_PID | mem BYTES PARENT_PID\n");
    return 2;
  }
  const std::string mode = argv[1];
  const unsigned long long amount = std::strtoull(argv[2], nullptr, 10);
  const long parent = std::strtol(argv[3], nullptr, 10);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return 2;
  if (getppid() != parent) return 0;  // the agent is already gone

  if (mode == "cpu") {
    if (amount < 1 || amount > 1024) return 2;
    std::vector<std::thread> threads;
    for (unsigned long long i = 1; i < amount; ++i) threads.emplace_back(Spin);
    Spin();
  }
  if (mode == "mem") {
    if (amount == 0) return 2;
    void* p = mmap(nullptr, amount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "fdrill-burn: mmap %llu bytes: %s\n", amount, std::strerror(errno));
      return 3;
    }
    const long page = sysconf(_SC_PAGESIZE);
    auto* bytes = static_cast<volatile unsigned char*>(p);
    for (unsigned long long off = 0; off < amount; off += static_cast<unsigned long long>(page))
      bytes[off] = 1;
    for (;;) pause();
  }
  std::fprintf(stderr, "fdrill-burn: unknown mode %s (cpu|mem)\n", argv[1]);
  return 2;
}
