#include "agents/ib_watch.h"

#include <thread>

#include <spdlog/spdlog.h>

namespace fdrill {

IbWatch::IbWatch(std::unique_ptr<RdmaEventSource> source, Duration lasting) {
  std::thread(Run, state_, std::move(source), lasting).detach();
}

void IbWatch::Stop() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->stop = true;
}

std::vector<RdmaAsyncEvent> IbWatch::TakeEvents() {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<RdmaAsyncEvent> out;
  out.swap(state_->events);
  return out;
}

void IbWatch::Run(std::shared_ptr<State> state, std::unique_ptr<RdmaEventSource> source,
                  Duration lasting) {
  const auto until = std::chrono::steady_clock::now() + lasting;
  while (std::chrono::steady_clock::now() < until) {
    {
      std::lock_guard<std::mutex> lock(state->mu);
      if (state->stop) return;
    }
    auto events = source->Poll(kPollWait);
    if (!events.ok()) {
      spdlog::warn("RDMA async events: {}; no longer watched", events.status().ToString());
      return;
    }
    std::lock_guard<std::mutex> lock(state->mu);
    if (state->stop) return;
    for (RdmaAsyncEvent& e : *events) state->events.push_back(std::move(e));
  }
}

}  // namespace fdrill
