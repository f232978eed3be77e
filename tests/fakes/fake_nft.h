// FakeNft: a ProcessRunner that plays nftables as port_loss (bridge family)
// and link_loss's egress (netdev family) use it — `nft add table|chain|rule
// FAMILY ...`, `nft list table FAMILY T` (exit 1, "No such file or
// directory", when absent), `nft -j list table FAMILY T` (the JSON nft 1.0.6
// prints) and `nft delete table FAMILY T` — and hands every other argv to the
// FakeNetKernel it wraps. Records every nft argv. Table names are unique
// across families here (fdrill's are).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/fakes/fake_net.h"

namespace fdrill {

class FakeNft final : public ProcessRunner {
 public:
  explicit FakeNft(FakeNetKernel* net) : net_(net) {}

  struct Table {
    std::string family;
    std::map<std::string, std::string> chain_hooks;  // chain -> hook ("forward", "egress")
    std::vector<std::pair<std::string, std::vector<std::string>>> rules;  // chain, words
  };
  // table -> its chains and rules, each rule as the words after `nft add rule F T C`.
  std::map<std::string, Table> tables;
  std::vector<std::vector<std::string>> calls;

  Host host() { return Host{this, nullptr}; }

  // The next nft argv that starts with `prefix` fails as nft would.
  void FailNext(std::vector<std::string> prefix, std::string err) {
    failures_.Add(std::move(prefix), std::move(err), 1);
  }

  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration timeout) override {
    if (argv.empty() || argv[0] != "nft") return net_->Run(argv, timeout);
    ExpectKnownProgram(argv);
    calls.push_back(argv);
    if (auto failed = failures_.Take(argv)) return *failed;
    auto has = [&](size_t i, const char* s) { return argv.size() > i && argv[i] == s; };
    const bool json = has(1, "-j");
    const size_t o = json ? 1 : 0;  // words shift by one after -j
    if (!(has(3 + o, "bridge") || has(3 + o, "netdev")) || argv.size() < 5 + o)
      return ProcessResult{1, "", "FakeNft: unexpected command\n"};
    const std::string& family = argv[3 + o];
    const std::string& table = argv[4 + o];
    auto it = tables.find(table);
    auto missing = [&] {
      return ProcessResult{
          1, "", "Error: No such file or directory\nlist table " + family + " " + table + "\n"};
    };
    if (has(1, "add") && has(2, "table")) {
      tables[table].family = family;
      return ProcessResult{0, "", ""};
    }
    if (has(1, "add") && has(2, "chain") && argv.size() == 7) {
      if (it == tables.end()) return missing();
      const std::string& spec = argv[6];  // "{ type filter hook HOOK ..."
      size_t at = spec.find("hook ");
      std::string hook = at == std::string::npos ? "" : spec.substr(at + 5);
      it->second.chain_hooks[argv[5]] = hook.substr(0, hook.find(' '));
      return ProcessResult{0, "", ""};
    }
    if (has(1, "add") && has(2, "rule") && argv.size() > 6) {
      if (it == tables.end()) return missing();
      if (!it->second.chain_hooks.count(argv[5]))
        return ProcessResult{1, "", "Error: No such file or directory\n"};
      it->second.rules.push_back({argv[5], {argv.begin() + 6, argv.end()}});
      return ProcessResult{0, "", ""};
    }
    if (has(1 + o, "list") && has(2 + o, "table")) {
      if (it == tables.end()) return missing();
      if (!json) return ProcessResult{0, "table " + family + " " + table + " {\n}\n", ""};
      return ProcessResult{0, ListJson(table, it->second).dump(), ""};
    }
    if (has(1, "delete") && has(2, "table")) {
      if (it == tables.end()) return missing();
      tables.erase(it);
      return ProcessResult{0, "", ""};
    }
    return ProcessResult{1, "", "FakeNft: unexpected command\n"};
  }

 private:
  // The chains and the rule words the injectors write, as nft -j lists them back.
  static Json ListJson(const std::string& name, const Table& table) {
    const std::string& family = table.family;
    Json items = Json::array({{{"table", {{"family", family}, {"name", name}}}}});
    for (const auto& [chain, hook] : table.chain_hooks) {
      items.push_back({{"chain",
                        {{"family", family},
                         {"table", name},
                         {"name", chain},
                         {"type", "filter"},
                         {"hook", hook},
                         {"prio", 0},
                         {"policy", "accept"}}}});
    }
    for (const auto& [chain, words] : table.rules) {
      Json expr = Json::array();
      for (size_t i = 0; i < words.size(); ++i) {
        if (words[i] == "ip" && i + 2 < words.size() && words[i + 1] == "daddr") {
          const std::string& a = words[i + 2];
          size_t slash = a.find('/');
          Json right =
              slash == std::string::npos
                  ? Json(a)
                  : Json{{"prefix",
                          {{"addr", a.substr(0, slash)}, {"len", std::stoi(a.substr(slash + 1))}}}};
          expr.push_back({{"match",
                           {{"op", "=="},
                            {"left", {{"payload", {{"protocol", "ip"}, {"field", "daddr"}}}}},
                            {"right", right}}}});
        } else if (words[i] == "fwd" && i + 2 < words.size()) {
          expr.push_back({{"fwd", {{"dev", words[i + 2]}}}});
        } else if (words[i] == "oifname" && i + 1 < words.size()) {
          expr.push_back({{"match",
                           {{"op", "=="},
                            {"left", {{"meta", {{"key", "oifname"}}}}},
                            {"right", words[i + 1]}}}});
        } else if (words[i] == "numgen" && i + 5 < words.size()) {
          expr.push_back(
              {{"match",
                {{"op", "<"},
                 {"left",
                  {{"numgen",
                    {{"mode", "random"}, {"mod", std::stoull(words[i + 3])}, {"offset", 0}}}}},
                 {"right", std::stoull(words[i + 5])}}}});
        } else if (words[i] == "counter") {
          expr.push_back({{"counter", {{"packets", 0}, {"bytes", 0}}}});
        } else if (words[i] == "drop") {
          expr.push_back({{"drop", nullptr}});
        }
      }
      items.push_back(
          {{"rule", {{"family", family}, {"table", name}, {"chain", chain}, {"expr", expr}}}});
    }
    return {{"nftables", items}};
  }

  FakeNetKernel* net_;
  NextFailures failures_;
};

}  // namespace fdrill
