// fdrill job-rank [--preset P | --pattern RE] --jsonl PATH [--framework
// pytorch --master-addr A --master-port P --socket-ifname IFS] -- PROGRAM
// ARGS...: one rank of
// the operator's own job, as a drill's launcher (mpirun, srun) starts it.
// It runs PROGRAM with the rank variables its framework reads
// (workloads/job_rank.h), passes every line the program prints through to
// its own stdout unchanged (the drill's workload log), and writes one
// metrics record per step line to PATH ({rank}, {tmpdir}, {host}
// expanded), which the node's agent streams to the controller as it does
// fdrill-collective's. SIGTERM, SIGINT and SIGHUP are passed on to the
// program; if this process dies the program gets SIGKILL
// (PR_SET_PDEATHSIG), so no rank outlives its launcher. Exits with the
// program's status (128+signal when it was killed), 127 when it cannot be
// started, 2 for bad arguments.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli/commands.h"
#include "workloads/job_rank.h"
#include "workloads/path_template.h"
#include "workloads/step_lines.h"

extern char** environ;

namespace fdrill {

namespace {

volatile sig_atomic_t g_child = 0;

void PassOn(int sig) {
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int64_t Nanos(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

int64_t Nanos(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

struct JobRankOptions {
  std::string preset;
  std::string pattern;
  std::string jsonl;
  bool from_file = false;  // the job's own records, from $FDRILL_METRICS
  std::string framework;
  std::string master_addr;
  int master_port = 0;
  std::string socket_ifname;
  int nice = 0;
  std::vector<std::string> argv;
};

int RunJobRank(const JobRankOptions& o) {
  // No --preset or --pattern: the framework's variables only, no records.
  std::optional<StepLineReader> reader;
  if (!o.preset.empty() || !o.pattern.empty()) {
    auto made = StepLineReader::Make(o.preset, o.pattern);
    if (!made.ok()) {
      std::fprintf(stderr, "fdrill job-rank: %s\n", made.status().message().c_str());
      return 2;
    }
    if (o.jsonl.empty()) {
      std::fprintf(stderr, "fdrill job-rank: --preset and --pattern need --jsonl PATH\n");
      return 2;
    }
    if (o.from_file) {
      std::fprintf(stderr,
                   "fdrill job-rank: --from-file reads the job's own records; drop --preset and "
                   "--pattern\n");
      return 2;
    }
    reader = std::move(*made);
  }
  if (o.from_file && o.jsonl.empty()) {
    std::fprintf(stderr, "fdrill job-rank: --from-file needs --jsonl PATH\n");
    return 2;
  }
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr)
      env.emplace(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  auto rank = RankFromLauncher(env);
  if (!rank.ok()) {
    std::fprintf(stderr, "fdrill job-rank: %s\n", rank.status().message().c_str());
    return 2;
  }
  const std::string host = HostName();
  bool restarted = false;
  int out = -1;
  std::string job_file;  // $FDRILL_METRICS, with --from-file
  if (reader || o.from_file) {
    const std::string path = ExpandPathTemplate(o.jsonl, rank->rank, TmpDirFromEnv(), host);
    // Not *.jsonl: the agent streams those, and this one is the job's.
    if (o.from_file) job_file = path + ".job";
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    // Appended to: a relaunched job continues the file of the one before,
    // its records marked `restarted`.
    const auto size = std::filesystem::file_size(path, ec);
    restarted = !ec && size > 0;
    out = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out < 0) {
      std::fprintf(stderr, "fdrill job-rank: --jsonl %s: %s\n", path.c_str(), std::strerror(errno));
      return 2;
    }
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "fdrill job-rank: pipe: %s\n", std::strerror(errno));
    return 2;
  }
  auto extra =
      FrameworkEnv(env, *rank, {o.framework, o.master_addr, o.master_port, o.socket_ifname});
  if (!job_file.empty()) {
    std::error_code ec;
    std::filesystem::remove(job_file, ec);  // a relaunch's records start afresh
    extra[kMetricsFileEnv] = job_file;
  }
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "fdrill job-rank: fork: %s\n", std::strerror(errno));
    return 2;
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(137);  // the parent died before prctl
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    if (o.nice > 0) (void)setpriority(PRIO_PROCESS, 0, o.nice);
    for (const auto& [k, v] : extra) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "fdrill job-rank: cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  g_child = child;
  close(pipe_fds[1]);
  struct sigaction sa = {};
  sa.sa_handler = PassOn;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);

  const auto t0 = std::chrono::steady_clock::now();
  std::optional<int64_t> last_step;
  std::string pending;
  char buf[65536];
  std::optional<std::chrono::steady_clock::time_point> last_at;
  // TIMED: s.time_ms holds its time (the line's, or the reader's interval).
  auto emit = [&](StepRecord s, std::chrono::steady_clock::time_point now, bool timed) {
    if (last_step && s.step <= *last_step) return;  // not forward: a rewrite
    const int64_t covered = last_step ? s.step - *last_step : 1;
    if (!timed) {
      // No time of its own: the interval since the previous record as read,
      // spread over the steps it stands for (the first has no interval).
      if (!last_at) {
        last_step = s.step;
        last_at = now;
        return;
      }
      s.time_ms = std::chrono::duration<double, std::milli>(now - *last_at).count() /
                  static_cast<double>(covered);
      if (!(s.time_ms > 0)) {  // read with the one before: no interval to tell
        last_step = s.step;
        return;
      }
    }
    last_step = s.step;
    last_at = now;
    StepMeta meta{rank->rank, rank->world, host, Nanos(std::chrono::system_clock::now()),
                  Nanos(now), restarted};
    std::string record = StepMetricsLine(s, covered, meta);
    record.push_back('\n');
    (void)WriteAll(out, record.data(), record.size());
  };
  auto handle_line = [&](std::string_view line) {
    std::string echoed(line);
    echoed.push_back('\n');
    (void)WriteAll(STDOUT_FILENO, echoed.data(), echoed.size());
    if (!reader) return;
    const auto now = std::chrono::steady_clock::now();
    const double now_s = std::chrono::duration<double>(now - t0).count();
    // The reader has timed them (the line's own time, or its interval).
    for (const StepRecord& s : reader->Feed(line, now_s)) emit(s, now, true);
  };
  // --from-file: what the job appended to $FDRILL_METRICS since last time.
  int job_fd = -1;
  std::string job_pending;
  auto drain_job_file = [&] {
    if (job_file.empty()) return;
    if (job_fd < 0) job_fd = open(job_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (job_fd < 0) return;  // not written yet
    char chunk[16384];
    for (ssize_t n; (n = read(job_fd, chunk, sizeof(chunk))) > 0;) {
      job_pending.append(chunk, static_cast<size_t>(n));
    }
    const auto now = std::chrono::steady_clock::now();
    size_t from = 0;
    for (size_t nl = job_pending.find('\n'); nl != std::string::npos;
         nl = job_pending.find('\n', from)) {
      if (auto r = ParseMetricsFileLine(std::string_view(job_pending).substr(from, nl - from))) {
        emit(*r, now, r->timed_by_job);
      }
      from = nl + 1;
    }
    job_pending.erase(0, from);
  };
  for (;;) {
    if (!job_file.empty()) {
      // The job's file is read at least every 100 ms, output or not.
      struct pollfd p = {pipe_fds[0], POLLIN, 0};
      const int ready = poll(&p, 1, 100);
      drain_job_file();
      if (ready <= 0) continue;
    }
    const ssize_t n = read(pipe_fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t from = 0;
    for (size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', from)) {
      handle_line(std::string_view(pending).substr(from, nl - from));
      from = nl + 1;
    }
    pending.erase(0, from);
  }
  if (!pending.empty()) handle_line(pending);
  drain_job_file();
  if (job_fd >= 0) close(job_fd);
  close(pipe_fds[0]);
  if (out >= 0) close(out);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

void AddJobRankCommands(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<JobRankOptions>();
  auto* cmd = app.add_subcommand(
      "job-rank",
      "One rank of your own job under a drill's launcher: runs PROGRAM with its framework's "
      "rank variables, passes its output through and writes a metrics record per step line");
  cmd->add_option("--preset", opts->preset,
                  "step lines as a trainer prints them: megatron, torchtitan, deepspeed, "
                  "deepspeed-pipe, hf-trainer, lightning");
  cmd->add_option("--pattern", opts->pattern,
                  "or a regular expression with named groups (step, time_ms|time_s, loss, ...)");
  cmd->add_flag("--from-file", opts->from_file,
                "the job writes its own records, a JSON line per step, to $FDRILL_METRICS");
  cmd->add_option("--jsonl", opts->jsonl, "the metrics file; {rank}, {tmpdir}, {host} expanded");
  cmd->add_option("--framework", opts->framework, "pytorch: RANK, WORLD_SIZE, LOCAL_RANK, ...")
      ->check(CLI::IsMember({"", "none", "pytorch"}));
  cmd->add_option("--master-addr", opts->master_addr, "MASTER_ADDR for rank 0's rendezvous");
  cmd->add_option("--master-port", opts->master_port, "MASTER_PORT")->check(CLI::Range(1, 65535));
  cmd->add_option("--socket-ifname", opts->socket_ifname,
                  "GLOO_SOCKET_IFNAME: the interfaces the job's traffic takes (fab0,fab1)");
  cmd->add_option("--nice", opts->nice,
                  "the program's niceness (the emulated fabric: its agents share the cores)")
      ->check(CLI::Range(0, 19));
  cmd->add_option("program", opts->argv, "PROGRAM ARGS... (after --)")->required();
  cmd->callback([opts, exit_code] { *exit_code = RunJobRank(*opts); });
}

}  // namespace fdrill
