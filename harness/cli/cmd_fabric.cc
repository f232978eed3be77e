// `fdrill fabric up|down|status|exec|rsh|supervise`: the emulated fabric
// (fabric/). Thin: parse flags, wire the real host, print, set the exit code
// (0 done, 2 could not do it). exec and rsh replace this process; supervise
// is the agents' supervisor `up` starts (fabric/agent_supervisor.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>

#include "common/core/clock.h"
#include "common/core/units.h"
#include "common/host/real_process_runner.h"
#include "fabric/agent_supervisor.h"
#include "fabric/fabric_down.h"
#include "fabric/fabric_status.h"
#include "fabric/fabric_up.h"
#include "fabric/inventory.h"
#include "fabric/node_enter.h"
#include "fabric/real_node_system.h"
#include "harness/cli/commands.h"

namespace fdrill {

namespace {

namespace fs = std::filesystem;

// The real machine, for the lifetime of one command.
struct RealFabricHost {
  RealProcessRunner runner;
  RealSysFs sysfs;
  RealNodeSystem node;
  RealClock clock;
  FabricHost Get() { return FabricHost{&runner, &sysfs, &node, &clock}; }
};

// An exclusive flock(2) on a file, held until destruction (or exit).
class FileLock {
 public:
  FileLock() = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() {
    if (fd_ >= 0) close(fd_);
  }
  Status Take(const std::string& path) {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0 || flock(fd_, LOCK_EX) != 0)
      return FailedPrecondition("cannot lock " + path + ": " + std::strerror(errno));
    return Status::Ok();
  }

 private:
  int fd_ = -1;
};

int Fail(const std::string& command, const Status& status) {
  std::cerr << "fdrill fabric " << command << ": " << status.message() << "\n";
  return 2;
}

// --agent-bin as given (a path, or a name looked up in PATH), or
// fdrill-agent next to this executable; always absolute.
Result<std::string> ResolveAgentBin(const std::string& given) {
  std::error_code ec;
  fs::path path;
  if (given.empty()) {
    path = fs::read_symlink("/proc/self/exe", ec).parent_path() / "fdrill-agent";
  } else if (given.find('/') == std::string::npos) {
    const char* env = getenv("PATH");
    std::string dirs = env ? env : "/usr/bin:/bin";
    for (size_t start = 0; start <= dirs.size();) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      fs::path candidate = fs::path(dirs.substr(start, end - start)) / given;
      if (access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        break;
      }
      start = end + 1;
    }
    if (path.empty()) return NotFound("agent binary " + given + " not found in PATH");
  } else {
    path = given;
  }
  path = fs::absolute(path, ec);
  if (access(path.c_str(), X_OK) != 0) {
    return NotFound("agent binary " + path.string() +
                    " is not an executable file (build fdrill-agent, or pass --agent-bin)");
  }
  return path.string();
}

struct UpFlags {
  int nodes = 4;
  int rails = 1;
  int leaves = 1;
  double oversubscription = 1;
  std::string port_rate;  // "" : unshaped
  std::string agent_bin;
  bool no_wait = false;
  bool no_supervisor = false;
  bool no_agents = false;
  bool sshd = false;
  bool slurm = false;
};

std::string SelfExe() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).string();
}

int RunUp(const UpFlags& flags) {
  UpOptions options;
  options.shape.nodes = flags.nodes;
  options.shape.rails = flags.rails;
  options.shape.leaves = flags.leaves;
  options.shape.oversubscription = flags.oversubscription;
  if (!flags.port_rate.empty()) {
    auto rate = ParseRateBitsPerSec(flags.port_rate);
    if (!rate.ok()) return Fail("up", rate.status().Annotate("--port-rate"));
    options.shape.port_rate_bps = *rate;
  }
  // Before the agent binary is looked for: a shape that cannot be built is
  // the first thing to hear about.
  options.layout = FabricLayout::Current();
  if (Status s = CheckShape(options.layout, options.shape); !s.ok()) return Fail("up", s);
  auto bin = ResolveAgentBin(flags.agent_bin);
  if (!bin.ok()) return Fail("up", bin.status());
  options.agent_bin = *bin;
  options.wait_ready = !flags.no_wait;
  options.sshd = flags.sshd;
  if (flags.sshd) {
    if (Status s = CheckSshdInstalled(&options); !s.ok()) return Fail("up", s.Annotate("--sshd"));
  }
  options.slurm = flags.slurm;
  if (flags.slurm) {
    if (Status s = CheckSlurmInstalled(&options); !s.ok()) return Fail("up", s.Annotate("--slurm"));
  }
  options.agents = !flags.no_agents;
  if (!flags.no_supervisor && !flags.no_agents)
    options.supervisor_argv = SupervisorArgv(SelfExe(), options.layout.state_dir);
  RealFabricHost host;
  // A named fabric takes the first free management /24; the lock keeps two
  // `up`s from taking the same one before either bridge has its address.
  FileLock mgmt_lock;
  if (options.layout.mgmt_net.empty()) {
    if (Status s = mgmt_lock.Take("/run/fdrill/.mgmt.lock"); !s.ok()) return Fail("up", s);
    auto net = FreeMgmtNet(*host.Get().runner);
    if (!net.ok()) return Fail("up", net.status());
    options.layout.mgmt_net = *net;
  }
  auto state = FabricUp(options, host.Get());
  if (!state.ok()) return Fail("up", state.status());
  std::cout << "fabric up: " << state->nodes.size() << " nodes";
  if (!state->shape.Flat()) {
    std::cout << " x " << state->shape.rails << " rail(s), " << state->switches.size()
              << " switches";
  }
  std::cout << "; controller at " << state->controller_addr << " on " << state->mgmt_bridge
            << (flags.no_agents
                    ? "; no agents (--no-agents): start each node's on port " +
                          std::to_string(state->nodes.front().agent_port)
                    : std::string("; agents ") + (flags.no_wait ? "started" : "ready") +
                          " on port " + std::to_string(state->nodes.front().agent_port) +
                          (state->supervisor_pid > 0
                               ? "; supervisor pid " + std::to_string(state->supervisor_pid) +
                                     " restarts an agent that dies"
                               : "; unsupervised"))
            << "\nstate: " << options.layout.StateFile() << "\n";
  if (!state->ssh_dir.empty()) {
    std::cout << "sshd: on every node, port 22: ssh -F " << state->ssh_dir << "/config "
              << state->nodes.back().name << " hostname\n"
              << "names: unshare -m sh -c 'mount --bind " << state->ssh_dir
              << "/hosts /etc/hosts && exec $SHELL' (a shell where the nodes' names resolve)\n";
  }
  if (!state->slurm_dir.empty()) {
    std::cout << "slurm: cluster fdrill, partition fabric, every node idle: export SLURM_CONF="
              << state->slurm_dir << "/slurm.conf; sinfo; salloc -N" << state->nodes.size() << "\n";
  }
  return 0;
}

int RunDown() {
  RealFabricHost host;
  DownOptions options;
  options.layout = FabricLayout::Current();
  auto report = FabricDown(options, host.Get());
  if (!report.ok()) return Fail("down", report.status());
  if (report->found_nothing) {
    std::cout << "no fabric\n";
    return 0;
  }
  std::cout
      << "fabric down: stopped " << (report->supervisor_stopped ? "the supervisor and " : "")
      << report->agents_stopped << " agent(s)"
      << (report->agents_killed ? " (" + std::to_string(report->agents_killed) + " needed SIGKILL)"
                                : "")
      << (report->sshds_stopped ? ", " + std::to_string(report->sshds_stopped) + " sshd(s)" : "")
      << (report->slurm_stopped ? ", " + std::to_string(report->slurm_stopped) + " Slurm daemon(s)"
                                : "")
      << (report->processes_killed ? ", killed " + std::to_string(report->processes_killed) +
                                         " process(es) left in its namespaces"
                                   : "")
      << ", removed " << report->removed.size() << " object(s)\n";
  return 0;
}

int RunStatus(bool json) {
  RealFabricHost host;
  auto status = GetFabricStatus(DefaultFabricDir(), host.Get());
  if (status.ok()) {
    std::cout << (json ? RenderStatusJson(*status) : RenderStatusTable(*status));
    return 0;
  }
  if (status.status().code() != StatusCode::kNotFound) return Fail("status", status.status());
  auto inv = TakeInventory(FabricLayout::Current(), host.runner, host.sysfs);
  bool leftovers = inv.ok() && !inv->empty();
  if (json) {
    std::cout << "{\"nodes\": [], \"leftovers\": " << (leftovers ? "true" : "false") << "}\n";
  } else {
    std::cout << "no fabric"
              << (leftovers ? " (but leftovers of one exist; run `fdrill fabric down`)" : "")
              << "\n";
  }
  return 0;
}

std::atomic<bool> g_supervisor_stop{false};

// The supervisor's lines, each with a UTC time, on stdout (supervisor.log).
void SupervisorLogLine(const std::string& line) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::printf("%s.%03dZ %s\n", stamp, static_cast<int>(ms), line.c_str());
  std::fflush(stdout);
}

// Runs until SIGTERM/SIGINT or the fabric is gone; see agent_supervisor.h.
int RunSupervise(const std::string& state_dir) {
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_supervisor_stop = true; };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  RealFabricHost host;
  SuperviseOptions options;
  options.state_dir = state_dir;
  options.self_pid = getpid();
  options.stop = &g_supervisor_stop;
  options.log = SupervisorLogLine;
  std::string ended;
  Status s = Supervise(options, host.Get(), &ended);
  if (!s.ok()) return Fail("supervise", s);
  SupervisorLogLine("fdrill fabric supervisor: exiting: " + ended);
  return 0;
}

// `NODE [--] CMD ARGS...`; returns only on failure.
int RunExec(std::vector<std::string> args) {
  if (!args.empty() && args.front() == "--") args.erase(args.begin());
  if (args.empty())
    return Fail("exec", InvalidArgument("usage: fdrill fabric exec NODE -- CMD ARGS..."));
  std::string node_name = args.front();
  args.erase(args.begin());
  if (!args.empty() && args.front() == "--") args.erase(args.begin());
  if (args.empty()) return Fail("exec", InvalidArgument("no command given to run in " + node_name));
  auto state = LoadFabricState();
  if (!state.ok()) return Fail("exec", state.status());
  const FabricNode* node = state->FindAgentHost(node_name);
  if (node == nullptr) {
    std::string names;
    for (const FabricNode* n : state->AgentHosts()) names += (names.empty() ? "" : ", ") + n->name;
    return Fail("exec", NotFound("no node or switch " + node_name + " (" + names + ")"));
  }
  return Fail("exec", ExecInNode(*node, args));
}

// `HOST WORDS...` from Open MPI; returns only on failure.
int RunRsh(const std::vector<std::string>& args) {
  auto state = LoadFabricState();
  if (!state.ok()) return Fail("rsh", state.status());
  return Fail("rsh", RshExec(*state, args));
}

}  // namespace

void AddFabricCommands(CLI::App& app, int* exit_code) {
  auto* fabric = app.add_subcommand(
      "fabric", "the emulated fabric: N nodes as network namespaces on this machine");
  fabric->require_subcommand(1);

  auto up_flags = std::make_shared<UpFlags>();
  auto* up = fabric->add_subcommand(
      "up", "build N nodes (network + UTS namespaces, veths, bridges), start agents");
  up->add_option("--nodes", up_flags->nodes, "number of nodes")
      ->check(CLI::Range(1, kMaxFabricNodes))
      ->capture_default_str();
  up->add_option("--rails", up_flags->rails,
                 "fabric interfaces per node (fab0..), each rail its own subnet and switches")
      ->capture_default_str();
  up->add_option("--leaves", up_flags->leaves,
                 "leaf switches per rail (must divide --nodes); more than one adds a spine")
      ->capture_default_str();
  up->add_option("--oversubscription", up_flags->oversubscription,
                 "K: a leaf's uplink carries port rate x nodes per leaf / K (needs --port-rate)")
      ->capture_default_str();
  up->add_option("--port-rate", up_flags->port_rate,
                 "modelled switch port capacity, tc's spelling (1gbit, 500mbit); default unshaped");
  up->add_option("--agent-bin", up_flags->agent_bin,
                 "agent executable (default: fdrill-agent next to fdrill)");
  up->add_flag("--no-wait", up_flags->no_wait, "do not wait for the agents to accept connections");
  up->add_flag("--no-supervisor", up_flags->no_supervisor,
               "start no supervisor: an agent that dies stays dead (by default one is started "
               "again after 0.5 s, as systemd's Restart=always, and its journal sweep reverts "
               "what it left)");
  up->add_flag("--no-agents", up_flags->no_agents,
               "start no agents (and no supervisor): start them yourself as on a cluster, e.g. as "
               "a Slurm step with --slurm; each node has its own /etc/fdrill and /var/lib/fdrill");
  up->add_flag(
      "--sshd", up_flags->sshd,
      "run OpenSSH's sshd in every node on its management address (keys and configs in "
      "<state>/ssh, nothing of this machine's ssh touched): `ssh -F <state>/ssh/config n2`, "
      "and mpirun over ssh as on a cluster");
  up->add_flag("--slurm", up_flags->slurm,
               "run Slurm on the fabric: its own munged and slurmctld on the controller side and a "
               "slurmd in every node (config in <state>/slurm, nothing of this machine's Slurm or "
               "munge touched): SLURM_CONF=<state>/slurm/slurm.conf salloc -N4");
  up->callback([up_flags, exit_code] { *exit_code = RunUp(*up_flags); });

  auto* down = fabric->add_subcommand(
      "down", "stop the agents and remove every trace of the fabric (idempotent)");
  down->callback([exit_code] { *exit_code = RunDown(); });

  auto json = std::make_shared<bool>(false);
  auto* status = fabric->add_subcommand("status", "nodes, addresses, agents and link states");
  status->add_flag("--json", *json, "print JSON");
  status->callback([json, exit_code] { *exit_code = RunStatus(*json); });

  auto supervise_dir = std::make_shared<std::string>(DefaultFabricDir());
  auto* supervise = fabric->add_subcommand(
      "supervise", "the agents' supervisor `fabric up` starts (restarts an agent that dies)");
  supervise->group("");  // not for people: `up` runs it
  supervise->add_option("--state-dir", *supervise_dir, "the fabric's state dir")
      ->capture_default_str();
  supervise->callback([supervise_dir, exit_code] { *exit_code = RunSupervise(*supervise_dir); });

  // exec and rsh take the rest of the line verbatim (orted's words include
  // options such as "-mca"), so CLI11 must not parse it.
  auto* exec = fabric->add_subcommand(
      "exec", "run a command inside a node or switch: fdrill fabric exec NODE -- CMD ARGS...");
  exec->prefix_command();
  exec->callback([exec, exit_code] { *exit_code = RunExec(exec->remaining()); });

  auto* rsh =
      fabric->add_subcommand("rsh", "Open MPI's plm_rsh_agent: fdrill fabric rsh HOST WORDS...");
  rsh->prefix_command();
  rsh->callback([rsh, exit_code] { *exit_code = RunRsh(rsh->remaining()); });
}

}  // namespace fdrill
