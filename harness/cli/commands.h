// Each command group of the `fdrill` CLI registers its subcommands here. A
// subcommand's callback sets *exit_code: 0 the drill met its expectations (or
// the command succeeded), 1 the fabric missed them, 2 the harness could not
// do what was asked (bad input, unreachable agent, ...).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace fdrill {

void AddRunCommands(CLI::App& app, int* exit_code);        // run, plan, validate, panic
void AddFabricCommands(CLI::App& app, int* exit_code);     // fabric up|down|status|exec|rsh
void AddReportCommands(CLI::App& app, int* exit_code);     // report
void AddInjectorCommands(CLI::App& app, int* exit_code);   // injectors
void AddCertsCommands(CLI::App& app, int* exit_code);      // certs init|issue
void AddCompareCommands(CLI::App& app, int* exit_code);    // compare A B
void AddInventoryCommands(CLI::App& app, int* exit_code);  // inventory
void AddNcclTestsCommands(CLI::App& app, int* exit_code);  // nccl-tests FILE
void AddJobRankCommands(CLI::App& app, int* exit_code);    // job-rank -- PROGRAM (a rank of a job)

// fdrill plan FILE (cmd_plan.cc); its exit code.
int PrintPlan(const std::string& file);

}  // namespace fdrill
