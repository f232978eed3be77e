// Journal: the agent's durable record of applied faults, written and made
// durable BEFORE a fault is applied, so an agent that dies mid-fault finds on
// restart exactly what to revert.
//
// File format: JSON lines, then zeros to the end of the file.
//   {"op":"apply","id":"<fault id>","record":{"kind","params","saved"}}
//   {"op":"revert","id":"<fault id>"}
// The file is zero-filled ahead of use (written, not fallocated: an unwritten extent would turn
// each record's write into a metadata change), so a record is one pwrite into blocks the file
// already has, then fdatasync: the file's size and block map do not change, and the sync carries
// the data alone. The first step is 4 KiB (a drill's records fit; a fleet of 10,000 fake agents
// writes 40 MiB, not 2.5 GiB), each later one the file's size again, up to 256 KiB. Readers stop at
// the first zero byte. A torn last line (crash mid-write) is ignored: its fault was never applied,
// because Apply runs only after Record returns. When nothing is left pending
// the used part is zeroed instead of writing the last revert (the file is then
// empty to a reader). A
// journal of an older agent (lines, no zeros) reads the same. Not
// thread-safe; one Journal writes a file (others may read it).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/core/result.h"
#include "common/wire/wire.h"

namespace fdrill {

class Journal {
 public:
  explicit Journal(std::string path) : path_(std::move(path)) {}
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& path() const { return path_; }
  // Opens the file, creating and zero-filling it as needed, as the first
  // Record would (a failure leaves it closed: a later call tries again, so
  // a journal on a disk that was full works once space returns): after it a record is one pwrite
  // and one fdatasync. The agent prepares its journal when a drill takes its lease, so the first
  // fault does not pay for the file (an open, a read, a zero-fill and three
  // syncs), and a journal that cannot be kept refuses the lease, before any
  // fault. Once; later calls return at once.
  Status Prepare() { return Open(); }
  // Writes an apply record and syncs it. Returns only once it is durable.
  Status Record(const std::string& id, const Json& record);
  // Writes and syncs a revert record, or, when nothing would be left
  // pending, zeroes the used part instead.
  Status Clear(const std::string& id);
  // Faults recorded as applied and not yet reverted, in apply order, as the
  // file has them (read each call: what a restarted agent would find).
  Result<std::vector<std::pair<std::string, Json>>> Pending() const;

  static constexpr size_t kMinStep = 4 * 1024, kMaxStep = 256 * 1024;

 private:
  // Opens (creating and zero-filling as needed) and finds the end of the
  // records; once.
  Status Open();
  // Open's work; on failure Open closes what it left open.
  Status OpenOnce();
  Status Append(const Json& line);
  // Zero-fills [from, to) and syncs.
  Status Zero(size_t from, size_t to);
  // How far ahead of the records the next zero-fill reaches.
  size_t Step() const;

  std::string path_;
  int fd_ = -1;
  size_t end_ = 0;   // where the next record goes
  size_t size_ = 0;  // the file's size: zeros from end_ to here
  // What the records before end_ leave pending (read once at Open, then
  // kept), so a revert does not read the file back.
  std::vector<std::pair<std::string, Json>> pending_;
};

}  // namespace fdrill
