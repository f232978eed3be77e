// fdrill run | campaign | validate | panic: the drill commands (fdrill plan:
// cmd_plan.cc).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "common/core/json.h"
#include "common/core/stats.h"
#include "common/core/units.h"
#include "common/host/real_nvml.h"
#include "common/host/real_process_runner.h"
#include "common/host/real_processes.h"
#include "fabric/fabric_state.h"
#include "harness/cli/agent_flags.h"
#include "harness/cli/cli_common.h"
#include "harness/cli/commands.h"
#include "harness/controller/agent_set.h"
#include "harness/controller/campaign.h"
#include "harness/controller/drill.h"
#include "harness/controller/panic.h"
#include "harness/controller/progress.h"
#include "harness/scenario/scenario.h"
#include "injectors/injector.h"
#include "reports/brief.h"
#include "reports/report.h"

namespace fdrill {

namespace {

std::atomic<bool> g_abort{false};

// --start-timeout's default for a job read by its step lines (issue 50).
constexpr auto kFirstStepWithin = std::chrono::seconds(30);

void OnSignal(int) { g_abort = true; }

std::string DefaultRunDir(const std::string& name) {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  return "runs/" + std::string(stamp) + "-" + name;
}

// The job's program imports torch: `PROGRAM -c "import torch"` (a python
// interpreter; a script of another kind is not checked). FailedPrecondition
// naming the package when it does not.
Status CheckTorch(ProcessRunner& runner, const std::string& program) {
  const std::string base = std::filesystem::path(program).filename().string();
  if (base.rfind("python", 0) != 0) return Status::Ok();
  auto r = runner.Run({program, "-c", "import torch"}, std::chrono::seconds(60));
  if (r.ok() && r->exit_code == 0) return Status::Ok();
  std::string why = r.ok() ? r->err : r.status().message();
  if (const size_t nl = why.find_last_not_of("\n"); nl != std::string::npos) why.resize(nl + 1);
  if (const size_t at = why.rfind('\n'); at != std::string::npos) why = why.substr(at + 1);
  return FailedPrecondition("workload.framework: pytorch: " + program + " cannot import torch (" +
                            why +
                            "); install it on every node (Debian: apt-get install python3-torch), "
                            "or name the interpreter that has it in workload.command");
}

// --time-scale TEXT applied (harness/scenario/scenario.h ScaleTimes); "1"
// changes nothing.
Status ScaleTimesFlag(Scenario* s, const std::string& text) {
  const std::string flag = "--time-scale " + text;
  double factor = 0;
  size_t used = 0;
  try {
    factor = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) factor = -1;  // not a number: ScaleTimes says so
  if (factor == 1) return Status::Ok();
  return ScaleTimes(s, factor, flag);
}

int Run(const std::string& file, const std::string& out, const std::string& fabric_dir,
        const std::string& tls_dir, bool insecure, bool quiet, const std::string& start_timeout,
        const std::string& time_scale) {
  Duration started = DrillOptions{}.start_timeout;
  if (!start_timeout.empty()) {
    auto given = ParseDuration(start_timeout);
    if (!given.ok() || given->count() <= 0 || *given > std::chrono::hours(1)) {
      return Fail(InvalidArgument("--start-timeout " + start_timeout +
                                  ": a duration from 1s to 1h, like 60s or 5m"));
    }
    started = *given;
  }
  auto scenario = LoadScenario(file);
  if (!scenario.ok()) return Fail(scenario.status());
  // A job read by its step lines reports with its first one: 30 s unless
  // the operator gives the job longer (a large job's first step can take
  // minutes).
  if (start_timeout.empty() && scenario->workload.Steps()) started = kFirstStepWithin;
  if (Status st = ScaleTimesFlag(&*scenario, time_scale); !st.ok()) return Fail(st);
  // Where the drill's agents are, resolved once: the emulated fabric's
  // state, or a real cluster's (hosts file, Slurm allocation) host names.
  DrillTargets targets =
      DrillTargetsOfHosts(scenario->host_names, static_cast<uint16_t>(scenario->agent_port));
  if (scenario->Emulated()) {
    Result<FabricState> fabric = LoadFabricState(fabric_dir);
    if (!fabric.ok()) {
      if (fabric.status().code() == StatusCode::kNotFound) {
        return Fail(NotFound("no emulated fabric is up (" + fabric_dir +
                             "/fabric.json); run `fdrill fabric up --nodes " +
                             std::to_string(scenario->nodes) + "` first"));
      }
      return Fail(fabric.status());
    }
    targets = DrillTargetsOfFabric(*fabric);
  }
  DrillOptions opt;
  opt.out_dir = out.empty() ? DefaultRunDir(scenario->name) : out;
  opt.bin_dir = BinDir();
  opt.tls_dir = tls_dir;
  opt.insecure = insecure;
  opt.start_timeout = started;
  opt.abort = &g_abort;
  RealProcessRunner runner;
  opt.runner = &runner;
  // framework: pytorch on the emulated fabric, whose nodes are this host's
  // filesystem: the job's interpreter must import torch, or nothing starts.
  if (scenario->Emulated() && scenario->workload.framework == "pytorch") {
    if (auto st = CheckTorch(runner, scenario->workload.command.front()); !st.ok()) {
      return Fail(st);
    }
  }
  ProgressLine progress(stderr, isatty(STDERR_FILENO) != 0);
  if (!quiet) opt.progress = &progress;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  // A closed terminal or ssh session (SIGHUP) ends the drill as SIGTERM
  // does: reverted, reported, exit 2; never a bare exit 129.
  std::signal(SIGHUP, OnSignal);
  std::fprintf(stderr, "fdrill: running %s (at most %s%s) on %d nodes (%s) -> %s\n",
               scenario->name.c_str(), FormatDuration(scenario->TotalDuration()).c_str(),
               scenario->time_scale == 1 ? "" : (", time scale " + time_scale).c_str(),
               scenario->nodes, scenario->FabricName().c_str(), opt.out_dir.c_str());
  if (auto st = RunDrill(*scenario, targets, opt); !st.ok()) return Fail(st);
  auto summary = WriteReports(opt.out_dir);
  if (!summary.ok()) return Fail(summary.status().Annotate("report"));
  std::string dir = std::filesystem::absolute(opt.out_dir).string();
  std::printf("%s\n", dir.c_str());
  std::fflush(stdout);
  std::fputs(BriefText(*summary, dir).c_str(), stderr);
  return ExitCodeForVerdict(summary->verdict);
}

// Per metric, its spread over the campaign's runs (median, min, max): the
// noise a comparison across campaigns has to beat. Baseline busbw, then
// each fault's slowdown and time to recover, from each run's summary.json.
void PrintCampaignSpread(const std::string& dir, const std::vector<CampaignRun>& runs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> values;
  auto add = [&](const std::string& metric, const Json& v) {
    if (!v.is_number()) return;
    if (!values.count(metric)) order.push_back(metric);
    values[metric].push_back(v.get<double>());
  };
  for (const CampaignRun& r : runs) {
    std::ifstream in(std::filesystem::path(dir) / r.dir / "summary.json");
    const Json s = Json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!s.is_object()) continue;
    add("baseline busbw GB/s", s.value("baseline", Json::object()).value("busbw_median", Json()));
    for (const Json& f : s.value("faults", Json::array())) {
      add(f.value("id", "?") + " slowdown", f.value("slowdown", Json()));
      add(f.value("id", "?") + " recover s", f.value("time_to_recover_s", Json()));
    }
  }
  if (order.empty()) return;
  std::fprintf(stderr, "\n%-32s %10s %10s %10s %5s\n", "metric", "median", "min", "max", "runs");
  for (const std::string& m : order) {
    const std::vector<double>& v = values[m];
    const auto [low, high] = std::minmax_element(v.begin(), v.end());
    std::fprintf(stderr, "%-32s %10.3g %10.3g %10.3g %5zu\n", m.c_str(), *Median(v), *low, *high,
                 v.size());
  }
}

// fdrill campaign: the same drill REPEAT times into one directory
// (harness/controller/campaign.h), each run as `fdrill run --out DIR/run-NN`.
int Campaign(const std::string& file, const std::string& label, int repeat, std::string out,
             const std::string& fabric_dir, const std::string& tls_dir, bool insecure, bool quiet,
             const std::string& start_timeout, const std::string& time_scale) {
  auto scenario = LoadScenario(file);  // a bad scenario fails here, before any run
  if (!scenario.ok()) return Fail(scenario.status());
  if (Status st = ScaleTimesFlag(&*scenario, time_scale); !st.ok()) return Fail(st);
  if (out.empty()) out = "campaigns/" + label;
  const CampaignOptions options{
      .dir = out, .label = label, .scenario_file = file, .repeat = repeat};
  if (Status s = CheckCampaignOptions(options); !s.ok()) return Fail(s);
  std::fprintf(stderr, "fdrill: campaign %s: %s x %d -> %s\n", label.c_str(),
               scenario->name.c_str(), repeat, out.c_str());
  auto result = RunCampaign(
      options,
      [&](const std::string& run_dir) {
        return Run(file, run_dir, fabric_dir, tls_dir, insecure, quiet, start_timeout, time_scale);
      },
      &g_abort);
  if (!result.ok()) return Fail(result.status());
  std::fprintf(stderr, "\n%-8s %-8s %4s %8s\n", "run", "verdict", "exit", "wall s");
  int passed = 0;
  for (const CampaignRun& r : result->runs) {
    std::fprintf(stderr, "%-8s %-8s %4d %8.1f\n", r.dir.c_str(),
                 r.verdict.empty() ? "-" : r.verdict.c_str(), r.exit_code, r.wall_s);
    passed += r.exit_code == 0 ? 1 : 0;
  }
  const std::string dir = std::filesystem::absolute(out).string();
  PrintCampaignSpread(dir, result->runs);
  std::fprintf(stderr, "fdrill: campaign %s: %zu of %d runs, %d passed%s -> %s/campaign.json\n",
               label.c_str(), result->runs.size(), repeat, passed,
               result->complete ? "" : ("; " + result->stopped).c_str(), dir.c_str());
  std::printf("%s\n", dir.c_str());
  return CampaignExitCode(*result);
}

int Validate(const std::vector<std::string>& files) {
  int rc = 0;
  for (const auto& f : files) {
    if (IsTopologyFile(f)) {  // scenarios/topology*.yaml sit beside the drills
      auto t = LoadTopology(f);
      if (!t.ok()) {
        std::fprintf(stderr, "%s\n", t.status().message().c_str());
        rc = 2;
      } else {
        std::printf("%s: ok (topology: %zu rails, %zu leaves, %zu NVLink domains)\n", f.c_str(),
                    t->rails.size(), t->leaves.size(), t->nvlink_domains.size());
      }
      continue;
    }
    auto s = LoadScenario(f);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().message().c_str());
      rc = 2;
    } else {
      size_t faults = 0;
      bool gated = false;
      for (const auto& p : s->phases) {
        faults += p.faults.size();
        gated = gated || p.gate.has_value();
      }
      std::printf("%s: ok (%s, %zu phases, %zu faults, %s%s)\n", f.c_str(), s->name.c_str(),
                  s->phases.size(), faults, gated ? "at most " : "",
                  FormatDuration(s->TotalDuration()).c_str());
    }
  }
  return rc;
}

// "root@ctl01": who latched the panic, for the agents' record.
std::string WhoPanics() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  const char* user = std::getenv("SUDO_USER");
  if (user == nullptr) user = std::getenv("USER");
  return std::string(user != nullptr ? user : "?") + "@" + host;
}

int Panic(AgentFlags flags, bool clear) {
  flags.with_switches = true;  // a switch port can hold a fault too
  auto resolved = flags.Resolve();
  if (!resolved.ok()) return Fail(resolved.status());
  int rc = 0;
  const TlsConfig* tls = resolved->tls ? &*resolved->tls : nullptr;
  const auto outcomes = clear ? PanicClearAll(resolved->agents, tls, std::chrono::seconds(5))
                              : PanicAll(resolved->agents, tls, std::chrono::seconds(5),
                                         "fdrill panic by " + WhoPanics());
  for (const auto& o : outcomes) {
    if (o.status.ok() && !o.latch_error.empty()) {
      std::printf(
          "%-6s reverted everything, workload stopped, lease broken; latched in memory "
          "only, until the agent restarts: %s\n",
          o.node.c_str(), o.latch_error.c_str());
    } else if (o.status.ok()) {
      std::printf("%-6s %s\n", o.node.c_str(),
                  clear ? "panic cleared: drills may lease this node again"
                        : "reverted everything, workload stopped, lease broken; latched until "
                          "`fdrill panic --clear`");
    } else {
      std::printf("%-6s FAILED: %s\n", o.node.c_str(), o.status.message().c_str());
      rc = 2;
    }
  }
  return rc;
}

}  // namespace

void AddRunCommands(CLI::App& app, int* exit_code) {
  auto* run = app.add_subcommand(
      "run",
      "run a drill (emulated fabric, hosts file or Slurm allocation) and write a run directory");
  static std::string file, out, fabric_dir = DefaultFabricDir();
  run->add_option("scenario", file, "scenario YAML file")->required();
  run->add_option("--out", out, "run directory (default runs/<UTC time>-<name>)");
  run->add_option("--fabric-dir", fabric_dir, "emulated fabric state directory")
      ->capture_default_str();
  static std::string tls_dir;
  static bool insecure = false;
  run->add_option("--tls-dir", tls_dir,
                  "ca.pem and controller.pem/.key (default: the emulated fabric's own pki; "
                  "on a real cluster /etc/fdrill/pki)");
  run->add_flag("--insecure", insecure, "talk plaintext to agents started with --insecure");
  static bool quiet = false;
  run->add_flag("--quiet", quiet,
                "no live progress line (phase, elapsed, busbw vs baseline, faults in force)");
  static std::string start_timeout;
  run->add_option("--start-timeout", start_timeout,
                  "how long the job may take until every rank reports (NCCL init on a large "
                  "cluster takes a while); a job read by its step lines (workload.metrics) "
                  "reports with its first one (default 60s; 30s for such a job)");
  static std::string time_scale = "1";
  run->add_option("--time-scale", time_scale,
                  "every phase and fault window times this factor (0.1-10; 0.5: at half "
                  "length): a drill run quicker; the job's own timeouts and a fault's params "
                  "keep theirs")
      ->capture_default_str();
  run->callback([exit_code] {
    *exit_code = Run(file, out, fabric_dir, tls_dir, insecure, quiet, start_timeout, time_scale);
  });

  auto* campaign = app.add_subcommand(
      "campaign",
      "run one drill --repeat times into one directory with an index (resumable: rerun the same "
      "command); exit 0 all passed, 1 a run failed its expectations, 2 stopped short");
  static std::string campaign_label, campaign_out;
  static int repeat = 0;
  campaign->add_option("scenario", file, "scenario YAML file")->required();
  campaign->add_option("--repeat", repeat, "how many runs (1-1000)")->required();
  campaign->add_option("--label", campaign_label, "the campaign's name, e.g. fw-28.39")->required();
  campaign->add_option("--out", campaign_out, "campaign directory (default campaigns/<label>)");
  campaign->add_option("--fabric-dir", fabric_dir, "emulated fabric state directory")
      ->capture_default_str();
  campaign->add_option("--tls-dir", tls_dir, "as fdrill run's");
  campaign->add_flag("--insecure", insecure, "as fdrill run's");
  campaign->add_flag("--quiet", quiet, "no live progress line");
  campaign->add_option("--start-timeout", start_timeout, "as fdrill run's");
  campaign->add_option("--time-scale", time_scale, "as fdrill run's")->capture_default_str();
  campaign->callback([exit_code] {
    *exit_code = Campaign(file, campaign_label, repeat, campaign_out, fabric_dir, tls_dir, insecure,
                          quiet, start_timeout, time_scale);
  });

  auto* panic = app.add_subcommand(
      "panic",
      "every agent reverts everything now, stops its workload and latches: no drill may apply "
      "anything there until `fdrill panic --clear` (idempotent)");
  static AgentFlags panic_flags;
  static bool panic_clear = false;
  panic_flags.Add(panic);
  panic->add_flag("--clear", panic_clear,
                  "lift the latch an earlier `fdrill panic` left on every agent (audited there)");
  panic->callback([exit_code] { *exit_code = Panic(panic_flags, panic_clear); });

  auto* validate = app.add_subcommand("validate", "check scenario files; touches nothing");
  static std::vector<std::string> files;
  validate->add_option("scenarios", files, "scenario YAML files")->required();
  validate->callback([exit_code] { *exit_code = Validate(files); });

  auto* plan =
      app.add_subcommand("plan", "print every action, node, time and mechanism; touches nothing");
  static std::string plan_file;
  plan->add_option("scenario", plan_file, "scenario YAML file")->required();
  plan->callback([exit_code] { *exit_code = PrintPlan(plan_file); });
}

void AddReportCommands(CLI::App& app, int* exit_code) {
  auto* report =
      app.add_subcommand("report", "re-render summary.json and report.md from a run directory");
  static std::string dir;
  report->add_option("run_dir", dir, "run directory")->required();
  report->callback([exit_code] {
    auto s = WriteReports(dir);
    if (!s.ok()) {
      *exit_code = Fail(s.status());
      return;
    }
    std::printf("%s: verdict %s (summary.json, report.md, report.html, junit.xml)\n", dir.c_str(),
                VerdictName(s->verdict));
    std::fflush(stdout);
    std::fputs(BriefText(*s, std::filesystem::absolute(dir).string()).c_str(), stderr);
    *exit_code = ExitCodeForVerdict(s->verdict);
  });
}

void AddInjectorCommands(CLI::App& app, int* exit_code) {
  auto* inj = app.add_subcommand("injectors",
                                 "list the fault kinds this build can inject, and whether this "
                                 "node can run each (and why not)");
  inj->callback([exit_code] {
    // The probes only read (tool version queries, sysfs, /proc).
    RealProcessRunner runner;
    RealSysFs sysfs;
    RealProcessTable procs;
    Host host{&runner, &sysfs, &procs};
    host.gpus = &NvmlAt(NvmlLibraryPath());
    for (const auto& i : Injectors()) {
      Status can = i.probe != nullptr ? i.probe(Json::object(), host) : Status::Ok();
      std::printf(
          "%-16s %s\n%-16s   scope: %s\n%-16s   reaches: %s\n%-16s   params: %s\n%-16s   this "
          "node: %s\n",
          i.name, i.help, "", ScopeName(i.scope), "", ReachText(i.reach).c_str(), "", i.params, "",
          can.ok() ? "can run it" : ("cannot: " + can.message()).c_str());
    }
    *exit_code = 0;
  });
}

}  // namespace fdrill
