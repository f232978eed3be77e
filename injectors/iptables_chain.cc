#include "injectors/iptables_chain.h"

#include <cstdio>

#include "common/core/json.h"
#include "injectors/netdev.h"

namespace fdrill {

namespace {

constexpr auto kTimeout = std::chrono::seconds(10);

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Status ExitError(const Argv& argv, const ProcessResult& r) {
  return FailedPrecondition("`" + JoinArgv(argv) + "` exited " + std::to_string(r.exit_code) +
                            (r.err.empty() ? "" : ": " + Trim(r.err)));
}

}  // namespace

std::string FaultChainName(const std::string& tag, const std::string& kind, const Json& params) {
  uint32_t h = 2166136261u;  // FNV-1a; Json dumps object keys sorted, so equal params hash equal
  for (char c : kind + "\n" + DumpJson(params, -1)) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", h);
  return "FDRILL-" + tag + "-" + hex;
}

Argv IptablesChain::Ipt(std::vector<std::string> args) const {
  Argv argv = {"iptables", "-w", "5", "-t", spec_.table};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Argv IptablesChain::JumpSpec(const Argv& hook) const {
  Argv spec(hook.begin() + 1, hook.end());
  for (const char* a : {"-m", "comment", "--comment"}) spec.push_back(a);
  spec.push_back(spec_.comment);
  spec.push_back("-j");
  spec.push_back(spec_.name);
  return spec;
}

Result<bool> IptablesChain::Check(const std::string& chain, const Argv& spec) {
  Argv args = {"-C", chain};
  args.insert(args.end(), spec.begin(), spec.end());
  Argv argv = Ipt(args);
  auto r = runner_->Run(argv, kTimeout);
  if (!r.ok()) return r.status();
  if (r->exit_code == 0) return true;
  if (r->exit_code == 1) return false;  // "Bad rule (does a matching rule exist in that chain?)"
  return ExitError(argv, *r);
}

Result<bool> IptablesChain::ChainExists() {
  Argv argv = Ipt({"-S", spec_.name});
  auto r = runner_->Run(argv, kTimeout);
  if (!r.ok()) return r.status();
  if (r->exit_code == 0) return true;
  if (r->exit_code == 1) return false;  // "No chain/target/match by that name."
  return ExitError(argv, *r);
}

Result<std::vector<std::string>> IptablesChain::SavedTable() {
  auto out = RunChecked(*runner_, {"iptables-save"}, kTimeout);
  if (!out.ok()) return out.status();
  std::vector<std::string> lines;
  bool in_table = false;
  size_t start = 0;
  while (start < out->size()) {
    size_t nl = out->find('\n', start);
    std::string line = out->substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? out->size() : nl + 1;
    if (line.rfind('*', 0) == 0) in_table = line == "*" + spec_.table;
    if (in_table) lines.push_back(line);
    if (line == "COMMIT") in_table = false;
  }
  return lines;
}

Status IptablesChain::Capture() {
  auto version = RunChecked(*runner_, {"iptables", "-V"}, kTimeout);
  if (!version.ok()) return version.status().Annotate(who_);
  nft_ = version->find("nf_tables") != std::string::npos;
  auto exists = ChainExists();
  if (!exists.ok()) return exists.status().Annotate(who_);
  if (*exists) {
    return FailedPrecondition(who_ + ": iptables chain " + spec_.name + " (table " + spec_.table +
                              ") already exists: an identical fault is active, or a drill left it. "
                              "Run `fdrill-agent --revert-all`, or delete it by hand");
  }
  auto table = SavedTable();
  if (!table.ok()) return table.status().Annotate(who_);
  table_existed_ = !table->empty();
  return Status::Ok();
}

void IptablesChain::Load(const Json& saved) {
  // The journalled name, not a recomputed one: the hash may change between versions.
  spec_.name = saved.value("chain", spec_.name);
  table_existed_ = saved.value("table_existed", true);
  nft_ = saved.value("nft", false);
}

Status IptablesChain::Apply() {
  std::vector<Argv> steps = {Ipt({"-N", spec_.name})};
  for (const auto& rule : spec_.rules) {
    Argv args = {"-A", spec_.name};
    args.insert(args.end(), rule.begin(), rule.end());
    steps.push_back(Ipt(args));
  }
  for (const auto& hook : spec_.hooks) {
    Argv args = {"-I", hook[0], "1"};
    Argv jump = JumpSpec(hook);
    args.insert(args.end(), jump.begin(), jump.end());
    steps.push_back(Ipt(args));
  }
  return RunEachChecked(*runner_, steps, who_, kTimeout);
}

Status IptablesChain::Verify() {
  for (const auto& rule : spec_.rules) {
    auto present = Check(spec_.name, rule);
    if (!present.ok()) return present.status().Annotate(who_);
    if (!*present) {
      return FailedPrecondition(who_ + ": chain " + spec_.name + " lacks the rule `" +
                                JoinArgv(rule) + "`");
    }
  }
  for (const auto& hook : spec_.hooks) {
    auto present = Check(hook[0], JumpSpec(hook));
    if (!present.ok()) return present.status().Annotate(who_);
    if (!*present) {
      return FailedPrecondition(who_ + ": " + hook[0] + " has no jump to " + spec_.name + " (`" +
                                JoinArgv(JumpSpec(hook)) + "`)");
    }
  }
  return Status::Ok();
}

Status IptablesChain::Revert() {
  auto exists = ChainExists();
  if (!exists.ok()) return exists.status().Annotate(who_);
  if (*exists) {  // a jump cannot outlive the chain it targets, so no chain: no jumps
    for (const auto& hook : spec_.hooks) {
      for (int guard = 0; guard < 16; ++guard) {  // delete every copy, never loop forever
        auto present = Check(hook[0], JumpSpec(hook));
        if (!present.ok()) return present.status().Annotate(who_);
        if (!*present) break;
        Argv args = {"-D", hook[0]};
        Argv jump = JumpSpec(hook);
        args.insert(args.end(), jump.begin(), jump.end());
        if (auto r = RunChecked(*runner_, Ipt(args), kTimeout); !r.ok())
          return r.status().Annotate(who_);
      }
    }
    for (const char* op : {"-F", "-X"}) {
      if (auto r = RunChecked(*runner_, Ipt({op, spec_.name}), kTimeout); !r.ok())
        return r.status().Annotate(who_);
    }
  }
  if (table_existed_ || !nft_) return Status::Ok();
  // We created the table (nf_tables backend): delete it once nothing but its
  // empty, ACCEPTing base chains remains, so iptables-save reads as found.
  auto table = SavedTable();
  if (!table.ok()) return table.status().Annotate(who_);
  if (table->empty()) return Status::Ok();
  for (const auto& line : *table) {
    if (line.rfind("-A ", 0) == 0) return Status::Ok();  // someone else's rules: keep it
    if (line.rfind(':', 0) == 0 && line.find(" ACCEPT ") == std::string::npos) return Status::Ok();
  }
  auto r = runner_->Run({"nft", "delete", "table", "ip", spec_.table}, kTimeout);
  if (!r.ok()) {
    // No nft binary (nftables is optional on a node): an empty, accepting
    // table is harmless; VerifyReverted allows it.
    return IsProgramMissing(r.status()) ? Status::Ok() : r.status().Annotate(who_);
  }
  if (r->exit_code != 0)
    return ExitError({"nft", "delete", "table", "ip", spec_.table}, *r).Annotate(who_);
  return Status::Ok();
}

Status IptablesChain::VerifyReverted() {
  auto exists = ChainExists();
  if (!exists.ok()) return exists.status().Annotate(who_);
  if (*exists) return FailedPrecondition(who_ + ": iptables chain " + spec_.name + " still exists");
  if (table_existed_ || !nft_) return Status::Ok();
  auto table = SavedTable();
  if (!table.ok()) return table.status().Annotate(who_);
  for (const auto& line : *table) {
    if (line.rfind("-A ", 0) == 0 && line.find(spec_.name) != std::string::npos) {
      return FailedPrecondition(who_ + ": table " + spec_.table + " still holds `" + line + "`");
    }
  }
  return Status::Ok();
}

std::vector<std::string> IptablesChain::Mechanism() const {
  std::vector<std::string> out;
  out.push_back("apply: " + JoinArgv(Ipt({"-N", spec_.name})));
  for (const auto& rule : spec_.rules) {
    Argv args = {"-A", spec_.name};
    args.insert(args.end(), rule.begin(), rule.end());
    out.push_back("apply: " + JoinArgv(Ipt(args)));
  }
  for (const auto& hook : spec_.hooks) {
    Argv args = {"-I", hook[0], "1"};
    Argv jump = JumpSpec(hook);
    args.insert(args.end(), jump.begin(), jump.end());
    out.push_back("apply: " + JoinArgv(Ipt(args)));
  }
  for (const auto& hook : spec_.hooks) {
    Argv args = {"-D", hook[0]};
    Argv jump = JumpSpec(hook);
    args.insert(args.end(), jump.begin(), jump.end());
    out.push_back("revert: " + JoinArgv(Ipt(args)));
  }
  out.push_back("revert: " + JoinArgv(Ipt({"-F", spec_.name})) + "; " +
                JoinArgv(Ipt({"-X", spec_.name})));
  return out;
}

Status ChainFault::Capture() {
  if (!ifname_.empty()) {
    NetOf net(host_);
    auto link = ReadLink(*net, ifname_);
    if (!link.ok()) return link.status().Annotate(kind_);
  }
  return chain_.Capture();
}

Status ProbeIptables(ProcessRunner& runner, const std::string& who) {
  auto r = runner.Run({"iptables", "-V"}, kTimeout);
  if (!r.ok()) {
    if (IsProgramMissing(r.status())) {
      return Unsupported(
          who + " needs iptables (the statistic and comment matches): " + r.status().message());
    }
    return r.status().Annotate(who);
  }
  if (r->exit_code != 0)
    return Unsupported(who + ": `iptables -V` exited " + std::to_string(r->exit_code));
  return Status::Ok();
}

Status ProbeChainFault(const Json& params, Host host, const std::string& kind) {
  if (auto s = ProbeIptables(*host.runner, kind); !s.ok()) return s;
  return ProbeInterface(host, params, kind);
}

}  // namespace fdrill
