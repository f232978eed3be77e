// Stop requests that arrive from outside the iteration loop: SIGTERM and
// SIGINT (the agent stopping the workload, or Ctrl-C), and a stop file the
// controller creates. The loop polls both once per iteration and then lets
// every rank agree (runner.cc), so a stop is always clean: the iteration in
// flight finishes, its record is written, the summary is printed.
// RequestStop/StopRequested are async-signal-safe and thread-safe.
#pragma once

#include <string>

namespace fdrill {

// Installs handlers for SIGTERM and SIGINT that call RequestStop(). A second
// signal does not force anything: a collective cannot be left half-done, and
// the agent escalates to SIGKILL itself.
void InstallStopSignals();

void RequestStop();
bool StopRequested();
// Forgets an earlier request (tests run several loops in one process).
void ClearStopRequest();

// True when `path` exists (any kind of file). An empty path never exists.
bool StopFileExists(const std::string& path);

}  // namespace fdrill
