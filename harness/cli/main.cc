// fdrill: the controller CLI. Subcommands register themselves in
// commands.h's groups; main owns the exit code:
//   0 the drill met its expectations (or the command succeeded)
//   1 the fabric missed them
//   2 the harness could not do what was asked
#include <cstdio>
#include <set>
#include <string>

#include "common/core/did_you_mean.h"
#include "common/core/log.h"
#include "common/core/version.h"
#include "fabric/fabric_state.h"
#include "harness/cli/commands.h"

int main(int argc, char** argv) {
  // FDRILL_FABRIC names the emulated fabric every command means; a bad name
  // is refused before anything is read or built.
  if (const std::string name = fdrill::CurrentFabricName(); !name.empty()) {
    if (fdrill::Status s = fdrill::CheckFabricName(name); !s.ok()) {
      std::fprintf(stderr, "fdrill: %s\n", s.message().c_str());
      return 2;
    }
  }
  CLI::App app{"fdrill: fault-injection drills for GPU-cluster interconnects"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("fdrill ") + fdrill::kFdrillVersion);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "debug|info|warn|error")
      ->capture_default_str()
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  int exit_code = 0;
  fdrill::AddRunCommands(app, &exit_code);
  fdrill::AddFabricCommands(app, &exit_code);
  fdrill::AddReportCommands(app, &exit_code);
  fdrill::AddInjectorCommands(app, &exit_code);
  fdrill::AddCertsCommands(app, &exit_code);
  fdrill::AddCompareCommands(app, &exit_code);
  fdrill::AddInventoryCommands(app, &exit_code);
  fdrill::AddNcclTestsCommands(app, &exit_code);
  fdrill::AddJobRankCommands(app, &exit_code);
  app.parse_complete_callback([&] { fdrill::InitLogging("fdrill", log_level); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A word that is no subcommand: CLI11 says only "A subcommand is
    // required" or "The following arguments were not expected"; name it,
    // with the closest subcommand.
    std::set<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      names.insert(sub->get_name());
    if (e.get_exit_code() != 0 && argc > 1 && argv[1][0] != '-' && !names.count(argv[1])) {
      const std::string hint = fdrill::DidYouMean(argv[1], names);
      std::fprintf(stderr, "fdrill: \"%s\" is not a subcommand%s%s (`fdrill --help` lists them)\n",
                   argv[1], hint.empty() ? "" : "; ", hint.c_str());
      return 2;
    }
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
