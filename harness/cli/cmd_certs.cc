// `fdrill certs init|issue`: the CA and certificates for mutual TLS between
// the controller and its agents (harness/tls/certs.h). Thin: parse flags,
// call the library, print what was written, set the exit code (0 done, 2
// could not do it). Never overwrites a key or certificate.
#include <cstdio>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/tls/certs.h"

namespace fdrill {

namespace {

int Report(const Status& s, const std::string& what) {
  if (!s.ok()) {
    std::fprintf(stderr, "fdrill certs: %s\n", s.message().c_str());
    return 2;
  }
  std::printf("%s\n", what.c_str());
  return 0;
}

}  // namespace

void AddCertsCommands(CLI::App& app, int* exit_code) {
  auto* certs = app.add_subcommand(
      "certs", "the CA and certificates agents and the controller authenticate with");
  certs->require_subcommand(1);

  auto init_dir = std::make_shared<std::string>(kDefaultPkiDir);
  auto* init = certs->add_subcommand(
      "init", "make a CA: DIR/ca.pem and DIR/ca.key (0600); refuses to overwrite");
  init->add_option("--dir", *init_dir, "where the CA lives")->capture_default_str();
  init->callback([init_dir, exit_code] {
    *exit_code =
        Report(InitCa(*init_dir), "wrote " + *init_dir + "/ca.pem and " + *init_dir + "/ca.key");
  });

  auto issue_dir = std::make_shared<std::string>(kDefaultPkiDir);
  auto name = std::make_shared<std::string>();
  auto* issue = certs->add_subcommand(
      "issue",
      "make DIR/NAME.pem and DIR/NAME.key signed by DIR's CA (NAME: a node, or \"controller\")");
  issue
      ->add_option("name", *name,
                   "the certificate's CN: the node name an agent serves as, or controller")
      ->required();
  issue->add_option("--dir", *issue_dir, "where the CA lives and the certificate goes")
      ->capture_default_str();
  issue->callback([issue_dir, name, exit_code] {
    std::string base = *issue_dir + "/" + *name;
    *exit_code = Report(IssueCert(*issue_dir, *name, *issue_dir),
                        "wrote " + base + ".pem and " + base + ".key");
  });
}

}  // namespace fdrill
