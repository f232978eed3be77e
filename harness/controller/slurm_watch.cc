#include "harness/controller/slurm_watch.h"

#include <sstream>

namespace fdrill {

std::vector<SlurmNodeState> ParseSinfoStates(const std::string& out) {
  std::vector<SlurmNodeState> states;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find('|');
    const size_t b = a == std::string::npos ? a : line.find('|', a + 1);
    if (b == std::string::npos) continue;
    states.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return states;
}

void SlurmWatch::SampleOnce() {
  auto out =
      runner_.Run({"sinfo", "--noheader", "--Node", "--nodes", nodelist_, "--format", "%N|%T|%E"},
                  std::chrono::seconds(10));
  if (!out.ok() || out->exit_code != 0) {
    if (!said_no_answer_) {
      said_no_answer_ = true;
      const std::string why = !out.ok() ? out.status().message() : out->err;
      on_node_({"*", "no answer", why.substr(0, why.find('\n'))});
    }
  } else {
    said_no_answer_ = false;
    for (const SlurmNodeState& now : ParseSinfoStates(out->out)) {
      auto it = last_.find(now.node);
      if (it != last_.end() && it->second.state == now.state && it->second.reason == now.reason)
        continue;
      last_[now.node] = now;
      on_node_(now);
    }
  }
  if (job_.empty()) return;
  auto job = runner_.Run({"squeue", "--noheader", "--jobs", job_, "--format", "%T"},
                         std::chrono::seconds(10));
  std::string state;
  if (job.ok() && job->exit_code == 0) {
    state = job->out.substr(0, job->out.find('\n'));
    // Gone from the queue: ended (this fabric keeps no accounting to say how).
    if (state.empty()) state = "ended";
  } else if (job.ok()) {
    // squeue refuses a job id it no longer knows ("Invalid job id").
    state = "ended";
  }
  if (!state.empty() && state != last_job_) {
    last_job_ = state;
    on_job_(job_, state);
  }
}

void SlurmWatch::Start(Duration interval) {
  stop_ = false;
  thread_ = std::thread([this, interval] {
    while (!stop_) {
      SampleOnce();
      for (auto slept = Duration::zero(); slept < interval && !stop_;
           slept += std::chrono::milliseconds(100))
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
}

void SlurmWatch::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace fdrill
