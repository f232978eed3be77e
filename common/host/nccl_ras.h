// A client of NCCL's RAS service (Reliability, Availability, Serviceability;
// NCCL >= 2.24), which every NCCL process of a job runs on a TCP port of its
// node (NCCL_RAS_ADDR, default localhost:28028; NCCL_RAS_ENABLE=0 turns it
// off). Facts from NCCL's source (v2.28.9, src/ras/client_support.cc,
// client.cc, ras_internal.h):
//
//   - line protocol, client speaks first: "CLIENT PROTOCOL 2\n" is answered
//     "SERVER PROTOCOL 2\n" (the number has been 2 from 2.24 to 2.30);
//     "STATUS\n" is answered by a text report in several chunks, and the
//     server closes the connection after it: EOF is the only end marker.
//   - the report's "Errors" section lists processes of the job that did
//     not answer ("INCOMPLETE" / "  Missing communicator data from N job
//     process(es)") and those RAS declared dead ("DEAD" / "  N job
//     process(es) is|are considered dead (unreachable via the RAS
//     network)"), each optionally followed by "  Process PID on node ADDR
//     managing GPU ..." lines. A process that stops answering is missing
//     within ~5 s (RAS keep-alive warning) and dead 60 s after its
//     connection was lost (RAS_PEER_DEAD_TIMEOUT, x NCCL_RAS_TIMEOUT_FACTOR).
//   - the whole job answers through any one process: one node's port is
//     enough, as long as that node's own processes are alive.
//
// The JSON format (SET FORMAT json, 2.28.7+) is not used: in 2.28.7-2.28.9
// it is invalid JSON exactly when a rank is missing (no comma after
// "nvml_dev"; fixed in 2.29.2).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

struct RasAddress {
  std::string host = "localhost";
  int port = 28028;
  bool enabled = true;  // NCCL_RAS_ENABLE != 0
};

// From a job's environment (NCCL_RAS_ADDR "host:port" or "[v6]:port",
// NCCL_RAS_ENABLE); a malformed value is an error naming the variable.
Result<RasAddress> RasAddressFromEnv(const std::map<std::string, std::string>& env);

struct RasStatus {
  std::string nccl_version;  // "2.28.9"; "" when the header was absent
  int missing = 0;           // job processes that did not answer
  int dead = 0;              // job processes RAS considers dead
  // "Process 12345 on node 10.0.0.2 managing GPU 3", as RAS prints them,
  // under DEAD and under INCOMPLETE (the job-wide entries only).
  std::vector<std::string> dead_processes;
  std::vector<std::string> missing_processes;
  // "#0-0 (cf264af53edbe986) INCOMPLETE": each communicator RAS flags.
  std::vector<std::string> communicators;
  int timeouts = 0;  // "Encountered N communication timeouts while gathering..."
  bool healthy() const { return missing == 0 && dead == 0 && communicators.empty(); }
};

// Parses a STATUS reply in RAS's text format. An error when it is not one
// (no "Errors" section header: a truncated reply, another service).
Result<RasStatus> ParseRasStatus(std::string_view text);

Json RasStatusJson(const RasStatus& status);

// Connects, says "CLIENT PROTOCOL 2", checks "SERVER PROTOCOL", sends
// "STATUS" and reads to EOF; the whole exchange within `timeout` (RAS's own
// collection takes at most 10 s at its defaults). Unavailable when nothing
// listens (no NCCL job on the node, or RAS off), DeadlineExceeded on time.
Result<std::string> QueryRasStatus(const RasAddress& address, Duration timeout);

}  // namespace fdrill
