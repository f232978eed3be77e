// Journal: the agent's durable record of applied faults, written and fsynced
// BEFORE a fault is applied, so an agent that dies mid-fault finds on restart
// exactly what to revert.
//
// File format: JSON lines, appended.
//   {"op":"apply","id":"<fault id>","record":{"kind","params","saved"}}
//   {"op":"revert","id":"<fault id>"}
// A torn last line (crash mid-write) is ignored: its fault was never applied,
// because Apply runs only after Record returns. Not thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/core/result.h"
#include "harness/wire/wire.h"

namespace fdrill {

class Journal {
 public:
  explicit Journal(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  // Appends and fsyncs an apply record. Returns only once it is durable.
  Status Record(const std::string& id, const Json& record);
  // Appends and fsyncs a revert record; truncates the file when nothing is
  // left pending.
  Status Clear(const std::string& id);
  // Faults recorded as applied and not yet reverted, in apply order.
  Result<std::vector<std::pair<std::string, Json>>> Pending() const;

 private:
  Status Append(const Json& line);
  std::string path_;
};

}  // namespace fdrill
