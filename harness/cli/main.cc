// fdrill: the controller CLI. Subcommands register themselves in
// commands.h's groups; main owns the exit code:
//   0 the drill met its expectations (or the command succeeded)
//   1 the fabric missed them
//   2 the harness could not do what was asked
#include <cstdio>

#include "harness/cli/commands.h"
#include "harness/core/log.h"
#include "harness/core/version.h"

int main(int argc, char** argv) {
  CLI::App app{"fdrill: fault-injection drills for GPU-cluster interconnects"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("fdrill ") + fdrill::kFdrillVersion);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "debug|info|warn|error")->capture_default_str();
  int exit_code = 0;
  fdrill::AddRunCommands(app, &exit_code);
  fdrill::AddFabricCommands(app, &exit_code);
  fdrill::AddReportCommands(app, &exit_code);
  fdrill::AddInjectorCommands(app, &exit_code);
  fdrill::AddCertsCommands(app, &exit_code);
  fdrill::AddCompareCommands(app, &exit_code);
  fdrill::AddInventoryCommands(app, &exit_code);
  fdrill::AddNcclTestsCommands(app, &exit_code);
  app.parse_complete_callback([&] { fdrill::InitLogging("fdrill", log_level); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
