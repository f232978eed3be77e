// `fdrill certs init|issue|revoke`: the CA and certificates for mutual TLS between
// the controller and its agents (common/tls/certs.h). Thin: parse flags,
// call the library, print what was written, set the exit code (0 done, 2
// could not do it). Never overwrites a key or certificate.
#include <cstdio>
#include <memory>

#include "common/tls/certs.h"
#include "harness/cli/commands.h"

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
  auto role = std::make_shared<std::string>();
  auto* issue = certs->add_subcommand(
      "issue",
      "make DIR/NAME.pem and DIR/NAME.key signed by DIR's CA, for one role: controller, node or "
      "observer");
  issue
      ->add_option("name", *name,
                   "the certificate's CN: the node name an agent serves as, or the controller's "
                   "or observer's name")
      ->required();
  issue
      ->add_option("--role", *role,
                   "controller (drives drills), node (an agent's server certificate), observer "
                   "(read-only: hello and inventory)")
      ->required();
  issue->add_option("--dir", *issue_dir, "where the CA lives and the certificate goes")
      ->capture_default_str();
  issue->callback([issue_dir, name, role, exit_code] {
    Result<CertRole> r = ParseCertRole(*role);
    if (!r.ok()) {
      *exit_code = Report(r.status(), "");
      return;
    }
    std::string base = *issue_dir + "/" + *name;
    *exit_code = Report(IssueCert(*issue_dir, *name, *issue_dir, *r),
                        "wrote " + base + ".pem and " + base + ".key (role " + *role + ")");
  });

  auto revoke_dir = std::make_shared<std::string>(kDefaultPkiDir);
  auto revoke_file = std::make_shared<std::string>();
  auto* revoke = certs->add_subcommand(
      "revoke",
      "add a certificate's serial to DIR/revoked.txt; agents that read that list (fdrill-agent "
      "--revoked, default revoked.txt beside --tls-ca) refuse it from their next request on");
  revoke->add_option("cert", *revoke_file, "the certificate (PEM) to revoke")->required();
  revoke->add_option("--dir", *revoke_dir, "where the CA and revoked.txt live")
      ->capture_default_str();
  revoke->callback([revoke_dir, revoke_file, exit_code] {
    Result<std::string> serial = RevokeCert(*revoke_dir, *revoke_file);
    *exit_code = Report(serial.status(), serial.ok() ? "revoked serial " + *serial + " in " +
                                                           *revoke_dir + "/" + kRevokedFile +
                                                           "; copy it to every agent's --revoked"
                                                     : "");
  });
}

}  // namespace fdrill
