// FakeVerbs: the RDMA devices a test sets, and an event source fed by the
// test through FakeRdmaEvents. The events' state is shared (shared_ptr) with
// every source opened, because the agent's watcher thread owns its source
// and may outlive the test's objects by one Poll. `stuck` makes Poll block,
// ignoring its deadline, until Release(): a device that never answers.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/host/verbs.h"

namespace fdrill {

struct FakeRdmaEvents {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<RdmaAsyncEvent> pending;
  bool stuck = false;
  bool fail = false;  // Poll errs, as when every device is gone
  int polls = 0;
  int sources_alive = 0;

  void Push(RdmaAsyncEvent e) {
    std::lock_guard<std::mutex> lock(mu);
    pending.push_back(std::move(e));
    cv.notify_all();
  }
  void Stick() {
    std::lock_guard<std::mutex> lock(mu);
    stuck = true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    stuck = false;
    cv.notify_all();
  }
  int Polls() {
    std::lock_guard<std::mutex> lock(mu);
    return polls;
  }
  int SourcesAlive() {
    std::lock_guard<std::mutex> lock(mu);
    return sources_alive;
  }
};

class FakeRdmaEventSource final : public RdmaEventSource {
 public:
  FakeRdmaEventSource(std::shared_ptr<FakeRdmaEvents> events, std::vector<std::string> devices)
      : events_(std::move(events)), devices_(std::move(devices)) {
    std::lock_guard<std::mutex> lock(events_->mu);
    ++events_->sources_alive;
  }
  ~FakeRdmaEventSource() override {
    std::lock_guard<std::mutex> lock(events_->mu);
    --events_->sources_alive;
  }

  Result<std::vector<RdmaAsyncEvent>> Poll(Duration wait) override {
    std::unique_lock<std::mutex> lock(events_->mu);
    ++events_->polls;
    events_->cv.wait(lock, [&] { return !events_->stuck; });
    events_->cv.wait_for(lock, wait, [&] { return !events_->pending.empty() || events_->fail; });
    if (events_->fail) return Unavailable("every RDMA device listened to is gone");
    std::vector<RdmaAsyncEvent> out(events_->pending.begin(), events_->pending.end());
    events_->pending.clear();
    return out;
  }
  std::vector<std::string> Devices() const override { return devices_; }

 private:
  std::shared_ptr<FakeRdmaEvents> events_;
  std::vector<std::string> devices_;
};

class FakeVerbs final : public Verbs {
 public:
  Result<std::vector<VerbsDevice>> ListDevices() override {
    if (!list_error.ok()) return list_error;
    return devices;
  }
  Result<std::unique_ptr<RdmaEventSource>> OpenEvents() override {
    ++opened;
    if (!open_error.ok()) return open_error;
    std::vector<std::string> names;
    for (const VerbsDevice& d : devices) names.push_back(d.name);
    return std::unique_ptr<RdmaEventSource>(
        std::make_unique<FakeRdmaEventSource>(events, std::move(names)));
  }

  std::vector<VerbsDevice> devices;
  std::shared_ptr<FakeRdmaEvents> events = std::make_shared<FakeRdmaEvents>();
  Status list_error;
  Status open_error;
  int opened = 0;
};

}  // namespace fdrill
