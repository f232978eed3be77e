#include "harness/controller/connect_all.h"

#include <malloc.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace fdrill {

std::vector<Status> ConnectAll(std::span<AgentLink* const> links, Duration timeout, size_t window) {
  // Shared with the callbacks: a dial that fails before it starts calls
  // back on this thread, the others on the io thread.
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Status> out;
    size_t in_flight = 0;
  };
  auto st = std::make_shared<State>();
  st->out.resize(links.size());
  window = std::max<size_t>(window, 1);
  for (size_t i = 0; i < links.size(); ++i) {
    {
      std::unique_lock<std::mutex> lock(st->mu);
      st->cv.wait(lock, [&] { return st->in_flight < window; });
      ++st->in_flight;
    }
    links[i]->ConnectAsync(timeout, [st, i](Status s) {
      std::lock_guard<std::mutex> lock(st->mu);
      st->out[i] = std::move(s);
      --st->in_flight;
      st->cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(st->mu);
  st->cv.wait(lock, [&] { return st->in_flight == 0; });
  // The handshakes' scratch (key shares, transcripts, the chain being
  // verified) was freed between the links' lasting allocations: hand the
  // whole free pages among them back (glibc; every arena).
  malloc_trim(0);
  return std::move(st->out);
}

}  // namespace fdrill
