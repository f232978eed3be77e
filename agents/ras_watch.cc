#include "agents/ras_watch.h"

#include <thread>

#include "common/wire/protocol.h"

namespace fdrill {

RasWatch::RasWatch(RasAddress address, Duration interval, Duration lasting) {
  std::thread(Run, state_, std::move(address), interval, lasting).detach();
}

void RasWatch::Stop() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->wake.notify_all();
}

std::vector<Json> RasWatch::TakeChanges() {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<Json> out;
  out.swap(state_->changes);
  return out;
}

Json RasWatch::Essence(const Json& sample) {
  namespace key = proto::key;
  Json e = {{key::kAnswered, sample.value(key::kAnswered, false)}};
  if (sample.contains(key::kRasStatus)) {
    const Json& st = sample[key::kRasStatus];
    for (const char* key :
         {"missing", "dead", "dead_processes", "missing_processes", "communicators"}) {
      e[key] = st.value(key, Json());
    }
  }
  return e;
}

void RasWatch::Run(std::shared_ptr<State> state, RasAddress address, Duration interval,
                   Duration lasting) {
  namespace key = proto::key;
  const auto until = std::chrono::steady_clock::now() + lasting;
  // A query must end before the next is due; RAS gives up within 10 s.
  const Duration timeout = std::max<Duration>(interval, std::chrono::seconds(12));
  while (std::chrono::steady_clock::now() < until) {
    {
      std::lock_guard<std::mutex> lock(state->mu);
      if (state->stop) return;
    }
    // The wall clock itself: the thread may outlive the agent's Clock.
    const int64_t wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
    Json sample = {{key::kWallNs, wall_ns}};
    auto text = QueryRasStatus(address, timeout);
    Result<RasStatus> status = text.ok() ? ParseRasStatus(*text) : Result<RasStatus>(text.status());
    sample[key::kAnswered] = status.ok();
    if (status.ok()) {
      sample[key::kRasStatus] = RasStatusJson(*status);
    } else {
      sample[key::kRasError] = status.status().message();
    }
    std::unique_lock<std::mutex> lock(state->mu);
    if (state->stop) return;
    Json essence = Essence(sample);
    if (essence != state->last) {
      state->last = essence;
      state->changes.push_back(std::move(sample));
    }
    if (state->wake.wait_for(lock, interval, [&] { return state->stop; })) return;
  }
}

}  // namespace fdrill
