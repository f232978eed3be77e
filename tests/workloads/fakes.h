// Test doubles of the workload's seams, for one rank without MPI: a World
// whose agreements echo this rank's value (recording how many ran), and a
// loopback Backend (on one rank every op's result is its input) whose Run()
// hook lets a test act at an exact call.
#pragma once

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "workloads/backend.h"
#include "workloads/world.h"

namespace fdrill {

class OneRankWorld final : public World {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  Result<int64_t> MaxInt64(int64_t value) override {
    ++agreements;
    return value;
  }
  Status Barrier() override {
    ++barriers;
    if (on_barrier) on_barrier(barriers);
    return Status::Ok();
  }
  Status StartMaxInt64(int64_t value) override {
    if (pending_) return Internal("two outstanding agreements");
    pending_ = value;
    return Status::Ok();
  }
  Result<int64_t> FinishMaxInt64() override {
    if (!pending_) return Internal("finish without start");
    ++agreements;
    int64_t v = *pending_;
    pending_.reset();
    return v;
  }
  bool outstanding() const { return pending_.has_value(); }
  Result<int64_t> SumInt64(int64_t value) override { return value; }
  Result<double> SumDouble(double value) override { return value; }
  Status Broadcast(std::span<std::byte>, int) override { return Status::Ok(); }
  Result<std::vector<std::string>> GatherToRoot(const std::string& text) override {
    return std::vector<std::string>{text};
  }

  int agreements = 0;
  int barriers = 0;
  std::function<void(int)> on_barrier;  // called with the count so far, 1 first

 private:
  std::optional<int64_t> pending_;
};

// One rank: every op's result is its input (n = 1).
class LoopbackBackend final : public Backend {
 public:
  explicit LoopbackBackend(size_t bytes) : send_(bytes), recv_(bytes) {}
  Status SetLayout(const Layout& layout) override {
    layouts.push_back(layout);
    return Status::Ok();
  }
  Status SetInput(std::span<const std::byte> input) override {
    if (input.size() > send_.size()) return Internal("input larger than the buffer");
    std::memcpy(send_.data(), input.data(), input.size());
    return Status::Ok();
  }
  Status Run() override {
    int64_t call = runs++;
    if (on_run) {
      Status s = on_run(call);
      if (!s.ok()) return s;
    }
    if (!skip_copy) recv_ = send_;
    skip_copy = false;
    return Status::Ok();
  }
  Status GetOutput(std::span<std::byte> output) override {
    std::memcpy(output.data(), recv_.data(), output.size());
    return Status::Ok();
  }
  Status Close() override { return Status::Ok(); }

  // Called with the 0-based index of every Run(), warm-ups included.
  std::function<Status(int64_t)> on_run;
  bool skip_copy = false;  // set from on_run: leave the previous result
  int64_t runs = 0;
  std::vector<Layout> layouts;

 private:
  std::vector<std::byte> send_, recv_;
};

}  // namespace fdrill
