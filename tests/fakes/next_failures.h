// NextFailures: the one-shot failures behind the recording fakes' FailNext.
// Add(prefix, err, code) makes the next command whose argv starts with
// PREFIX fail, once, with exit CODE and ERR on stderr, before the fake plays
// it; failures that match the same argv answer in the order they were added.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/host/host.h"

namespace fdrill {

class NextFailures {
 public:
  void Add(std::vector<std::string> prefix, std::string err, int code) {
    failures_.push_back({std::move(prefix), std::move(err), code});
  }
  // The failure due for ARGV, now spent; nullopt when none is.
  std::optional<ProcessResult> Take(const std::vector<std::string>& argv) {
    for (auto it = failures_.begin(); it != failures_.end(); ++it) {
      if (argv.size() >= it->prefix.size() &&
          std::equal(it->prefix.begin(), it->prefix.end(), argv.begin())) {
        ProcessResult r{it->code, "", it->err};
        failures_.erase(it);
        return r;
      }
    }
    return std::nullopt;
  }

 private:
  struct Failure {
    std::vector<std::string> prefix;
    std::string err;
    int code;
  };
  std::vector<Failure> failures_;
};

}  // namespace fdrill
