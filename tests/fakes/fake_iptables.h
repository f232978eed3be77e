// FakeIptables: a ProcessRunner that plays iptables (nf_tables backend by
// default) for the netfilter injectors. It keeps tables, chains and rules
// (each rule as the argv spec it was added with), answers -C/-S/-V and
// iptables-save, applies -N/-X/-F/-A/-I/-D and `nft delete table`, and
// records every argv. As the nf_tables backend does, a table comes into
// being (with its base chains) on the first command that changes it and
// stays until `nft delete table`. Commands it does not own (ip, tc) go to
// `next` (e.g. a FakeNetKernel). FailNext(prefix) makes the next matching
// command fail as the real tool would.
#pragma once

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "common/host/host.h"
#include "tests/fakes/fake_net.h"
#include "tests/fakes/known_program.h"
#include "tests/fakes/next_failures.h"

namespace fdrill {

class FakeIptables final : public ProcessRunner {
 public:
  using Argv = std::vector<std::string>;
  struct Chain {
    bool builtin = false;
    std::vector<Argv> rules;
  };
  struct Table {
    std::map<std::string, Chain> chains;
  };

  explicit FakeIptables(ProcessRunner* next = nullptr) : next_(next) {}

  bool legacy = false;                  // legacy backend: every table always exists
  bool have_nft = true;                 // the nft binary is installed
  std::map<std::string, Table> tables;  // only the tables that exist
  std::vector<Argv> calls;

  void FailNext(Argv prefix, std::string err, int code = 4) {
    failures_.Add(std::move(prefix), std::move(err), code);
  }

  // Commands that change state: iptables -N/-X/-F/-A/-I/-D and nft.
  std::vector<Argv> Mutations() const {
    std::vector<Argv> out;
    for (const auto& c : calls) {
      if (c[0] == "nft") out.push_back(c);
      if (c[0] != "iptables") continue;
      for (const auto& a : c) {
        if (a == "-N" || a == "-X" || a == "-F" || a == "-A" || a == "-I" || a == "-D")
          out.push_back(c);
      }
    }
    return out;
  }

  std::vector<Argv> CallsTo(const std::string& tool) const {
    std::vector<Argv> out;
    for (const auto& c : calls) {
      if (c[0] == tool) out.push_back(c);
    }
    return out;
  }

  // Every rule in every table, as "TABLE CHAIN spec...", for comparisons.
  std::vector<std::string> Dump() {
    std::vector<std::string> out;
    for (const auto& [t, table] : tables) {
      for (const auto& [c, chain] : table.chains) {
        out.push_back(t + " " + c + (chain.builtin ? "" : " (user)"));
        for (const auto& r : chain.rules) out.push_back(t + " " + c + " " + JoinArgv(r));
      }
    }
    return out;
  }

  Result<ProcessResult> Run(const Argv& argv, Duration timeout) override {
    ExpectKnownProgram(argv);
    calls.push_back(argv);
    if (auto failed = failures_.Take(argv)) return *failed;
    if (argv[0] == "iptables-save") return Ok(Save());
    if (argv[0] == "nft") {
      if (!have_nft) return ProgramMissing("nft");
      if (argv.size() == 5 && argv[1] == "delete" && argv[2] == "table" && argv[3] == "ip") {
        if (!tables.erase(argv[4]))
          return Fail(1, "Error: Could not process rule: No such file or directory\n");
        return Ok("");
      }
      return Fail(1, "FakeIptables: unexpected nft command\n");
    }
    if (argv[0] != "iptables") {
      if (next_) return next_->Run(argv, timeout);
      return Fail(127, "FakeIptables: unexpected command\n");
    }
    return Iptables(argv);
  }

 private:
  static ProcessResult Ok(std::string out) { return ProcessResult{0, std::move(out), ""}; }
  static ProcessResult Fail(int code, std::string err) {
    return ProcessResult{code, "", std::move(err)};
  }
  static ProcessResult NoChain() {
    return Fail(1, "iptables: No chain/target/match by that name.\n");
  }

  static std::vector<std::string> Builtins(const std::string& table) {
    if (table == "raw") return {"PREROUTING", "OUTPUT"};
    if (table == "filter") return {"INPUT", "FORWARD", "OUTPUT"};
    return {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"};
  }

  Table* Find(const std::string& t) {
    if (legacy && !tables.count(t)) Create(t);
    auto it = tables.find(t);
    return it == tables.end() ? nullptr : &it->second;
  }
  Table& Create(const std::string& t) {
    Table& table = tables[t];
    for (const auto& b : Builtins(t)) table.chains[b].builtin = true;
    return table;
  }
  static Chain* FindChain(Table* table, const std::string& c) {
    if (!table) return nullptr;
    auto it = table->chains.find(c);
    return it == table->chains.end() ? nullptr : &it->second;
  }
  static std::string JumpTarget(const Argv& spec) {
    for (size_t i = 0; i + 1 < spec.size(); ++i) {
      if (spec[i] == "-j") return spec[i + 1];
    }
    return "";
  }
  static bool IsVerdict(const std::string& t) {
    return t == "DROP" || t == "ACCEPT" || t == "RETURN" || t == "NFQUEUE" || t.empty();
  }
  bool Referenced(const Table& table, const std::string& c) const {
    for (const auto& [_, chain] : table.chains) {
      for (const auto& r : chain.rules) {
        if (JumpTarget(r) == c) return true;
      }
    }
    return false;
  }

  ProcessResult Iptables(const Argv& argv) {
    std::string t = "filter";
    size_t i = 1;
    for (; i < argv.size(); ++i) {
      if (argv[i] == "-w") {
        if (i + 1 < argv.size() && std::isdigit(static_cast<unsigned char>(argv[i + 1][0]))) ++i;
      } else if (argv[i] == "-t") {
        t = argv[++i];
      } else {
        break;
      }
    }
    if (i >= argv.size()) return Fail(2, "iptables: no command\n");
    std::string op = argv[i++];
    if (op == "-V")
      return Ok(legacy ? "iptables v1.8.9 (legacy)\n" : "iptables v1.8.9 (nf_tables)\n");
    if (op == "-S") return List(t, i < argv.size() ? argv[i] : "");
    if (i >= argv.size()) return Fail(2, "iptables: " + op + " needs a chain\n");
    std::string c = argv[i++];
    size_t pos = 0;
    if (op == "-I" && i < argv.size() && std::isdigit(static_cast<unsigned char>(argv[i][0]))) {
      pos = std::stoul(argv[i++]) - 1;
    }
    Argv spec(argv.begin() + static_cast<long>(i), argv.end());
    Table* table = Find(t);
    Chain* chain = FindChain(table, c);
    std::string target = JumpTarget(spec);
    bool target_ok = IsVerdict(target) || FindChain(table, target);
    if (op == "-N") {
      if (chain) return Fail(1, "iptables: Chain already exists.\n");
      if (!table) table = &Create(t);
      table->chains[c];
      return Ok("");
    }
    if (op == "-C") {
      if (!chain) return NoChain();
      if (!target_ok)
        return Fail(2, "iptables v1.8.9 (nf_tables): Chain '" + target + "' does not exist\n");
      bool found = std::find(chain->rules.begin(), chain->rules.end(), spec) != chain->rules.end();
      return found ? Ok("")
                   : Fail(1, "iptables: Bad rule (does a matching rule exist in that chain?).\n");
    }
    if (op == "-A" || op == "-I") {
      if (!chain && !(table == nullptr && IsBuiltin(t, c))) return NoChain();
      if (!table) table = &Create(t);
      chain = FindChain(table, c);
      if (!IsVerdict(target) && !FindChain(table, target)) {
        return Fail(2, "iptables v1.8.9 (nf_tables): Chain '" + target + "' does not exist\n");
      }
      auto at = op == "-A"
                    ? chain->rules.end()
                    : chain->rules.begin() + static_cast<long>(std::min(pos, chain->rules.size()));
      chain->rules.insert(at, spec);
      return Ok("");
    }
    if (op == "-D") {
      if (!chain) return NoChain();
      auto it = std::find(chain->rules.begin(), chain->rules.end(), spec);
      if (it == chain->rules.end())
        return Fail(1, "iptables: Bad rule (does a matching rule exist in that chain?).\n");
      chain->rules.erase(it);
      return Ok("");
    }
    if (op == "-F") {
      if (!chain) return NoChain();
      chain->rules.clear();
      return Ok("");
    }
    if (op == "-X") {
      if (!chain || chain->builtin) return NoChain();
      if (Referenced(*table, c))
        return Fail(1, "iptables: CHAIN_DEL failed (Device or resource busy).\n");
      if (!chain->rules.empty()) return Fail(1, "iptables: Directory not empty.\n");
      table->chains.erase(c);
      return Ok("");
    }
    return Fail(2, "FakeIptables: unexpected op " + op + "\n");
  }

  static bool IsBuiltin(const std::string& t, const std::string& c) {
    auto b = Builtins(t);
    return std::find(b.begin(), b.end(), c) != b.end();
  }

  ProcessResult List(const std::string& t, const std::string& only) {
    Table* table = Find(t);
    if (!only.empty() && !FindChain(table, only)) return NoChain();
    Table empty;
    if (!table) {  // a query does not create the table
      empty = Table{};
      for (const auto& b : Builtins(t)) empty.chains[b].builtin = true;
      table = &empty;
    }
    std::string out;
    for (const auto& [c, chain] : table->chains) {
      if (!only.empty() && c != only) continue;
      out += chain.builtin ? "-P " + c + " ACCEPT\n" : "-N " + c + "\n";
    }
    for (const auto& [c, chain] : table->chains) {
      if (!only.empty() && c != only) continue;
      for (const auto& r : chain.rules) out += "-A " + c + " " + JoinArgv(r) + "\n";
    }
    return Ok(out);
  }

  std::string Save() {
    if (legacy) {
      Find("filter");
      Find("raw");
    }
    std::string out;
    for (const auto& [t, table] : tables) {
      out += "# Generated by iptables-save v1.8.9 (nf_tables)\n*" + t + "\n";
      for (const auto& [c, chain] : table.chains)
        out += ":" + c + (chain.builtin ? " ACCEPT" : " -") + " [0:0]\n";
      for (const auto& [c, chain] : table.chains) {
        for (const auto& r : chain.rules) out += "-A " + c + " " + JoinArgv(r) + "\n";
      }
      out += "COMMIT\n# Completed\n";
    }
    return out;
  }

  ProcessRunner* next_;
  NextFailures failures_;
};

// A node as the netfilter injectors see it: iptables (and nft) played by
// FakeIptables, ip and tc passed on to a FakeNetKernel; no sysfs.
struct FakeIptablesNode {
  FakeNetKernel kernel;
  FakeIptables ipt{&kernel};
  Host host() { return Host{&ipt, nullptr}; }
};

}  // namespace fdrill
