#include "agents/ras_watch.h"

#include "harness/wire/protocol.h"

namespace fdrill {

RasWatch::RasWatch(RasAddress address, Duration interval, Duration lasting, const Clock& clock)
    : address_(std::move(address)), clock_(clock) {
  thread_ = std::thread([this, interval, lasting] { Run(interval, lasting); });
}

void RasWatch::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<Json> RasWatch::TakeChanges() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Json> out;
  out.swap(changes_);
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

void RasWatch::Run(Duration interval, Duration lasting) {
  const auto until = std::chrono::steady_clock::now() + lasting;
  // A query must end before the next is due; RAS gives up within 10 s.
  const Duration timeout = std::max<Duration>(interval, std::chrono::seconds(12));
  while (std::chrono::steady_clock::now() < until) {
    namespace key = proto::key;
    Json sample = {{key::kWallNs, clock_.WallNanos()}};
    auto text = QueryRasStatus(address_, timeout);
    Result<RasStatus> status = text.ok() ? ParseRasStatus(*text) : Result<RasStatus>(text.status());
    sample[key::kAnswered] = status.ok();
    if (status.ok()) {
      sample[key::kRasStatus] = RasStatusJson(*status);
    } else {
      sample[key::kRasError] = status.status().message();
    }
    std::unique_lock<std::mutex> lock(mu_);
    Json essence = Essence(sample);
    if (essence != last_) {
      last_ = essence;
      changes_.push_back(std::move(sample));
    }
    if (wake_.wait_for(lock, interval, [this] { return stop_; })) return;
  }
}

}  // namespace fdrill
