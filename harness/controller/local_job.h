// LocalJob: the workload launcher (mpirun, srun, or a command that starts
// itself) run on the controller's own host, as the user who runs `fdrill
// run` — on a real cluster the job belongs to the operator and their Slurm
// allocation or ssh keys, never to the root agents.
//
// Contract:
//  - Start runs argv (PATH lookup) in a new process group with stdin from
//    /dev/null and stdout+stderr on one pipe, and with PR_SET_PDEATHSIG
//    SIGTERM: if the controller dies (even by SIGKILL) the launcher gets
//    SIGTERM and takes its ranks down, so no job outlives its drill. Linux
//    ties that signal to the thread that called Start: call it from the
//    drill's own thread, which lives as long as the drill. A reader thread hands every
//    complete line to on_line (CR stripped) and keeps the last 64 KiB as the
//    log tail; at end of output it reaps the process and calls on_exit(code,
//    tail) once: code is the exit status, or 128+signal.
//  - Stop(grace) sends SIGTERM to the whole group (mpirun/srun forward it to
//    the ranks), waits up to grace, then SIGKILLs the group; it returns the
//    exit code, or -1 when nothing ran, once on_exit has returned (so a
//    caller that records the exit itself when on_exit did not sees what
//    on_exit recorded). Only this job's own group is ever
//    signalled, and only while its leader is unreaped (so the group id can
//    not have been reused). Output that a daemonised grandchild keeps open
//    is read for at most 2 s of silence after the leader ended.
//  - Callbacks run on the reader thread and must not call Stop; the
//    destructor stops the job (grace 5 s) and joins the thread.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

class LocalJob {
 public:
  using LineFn = std::function<void(const std::string& line)>;
  using ExitFn = std::function<void(int code, const std::string& tail)>;

  LocalJob(LineFn on_line, ExitFn on_exit)
      : on_line_(std::move(on_line)), on_exit_(std::move(on_exit)) {}
  ~LocalJob();
  LocalJob(const LocalJob&) = delete;
  LocalJob& operator=(const LocalJob&) = delete;

  // FailedPrecondition when a job of this LocalJob still runs; the spawn
  // error (naming argv[0]) when it cannot start.
  Status Start(const std::vector<std::string>& argv);
  int Stop(Duration grace);
  bool running();
  pid_t pid();

 private:
  void ReadLoop(int fd, pid_t pid);

  LineFn on_line_;
  ExitFn on_exit_;
  std::mutex mu_;
  std::condition_variable cv_;
  pid_t pid_ = 0;               // the group leader while it runs (unreaped)
  bool leader_reaped_ = false;  // reaped while its output drains: never signal the group then
  std::optional<int> last_code_;
  bool active_ = false;  // from Start until on_exit has returned
  std::thread reader_;
};

}  // namespace fdrill
