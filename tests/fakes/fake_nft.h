// FakeNft: a ProcessRunner that plays nftables for the bridge family as
// port_loss uses it — `nft add table|chain|rule bridge ...`, `nft list table
// bridge T` (exit 1, "No such file or directory", when absent), `nft -j list
// table bridge T` (the JSON nft 1.0.6 prints) and `nft delete table bridge
// T` — and hands every other argv to the FakeNetKernel it wraps. Records
// every nft argv.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/fakes/fake_net.h"

namespace fdrill {

class FakeNft final : public ProcessRunner {
 public:
  explicit FakeNft(FakeNetKernel* net) : net_(net) {}

  // table -> its rules, each as the words after `nft add rule bridge T C`.
  std::map<std::string, std::vector<std::vector<std::string>>> tables;
  std::vector<std::vector<std::string>> calls;

  Host host() { return Host{this, nullptr}; }

  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration timeout) override {
    if (argv.empty() || argv[0] != "nft") return net_->Run(argv, timeout);
    ExpectKnownProgram(argv);
    calls.push_back(argv);
    auto has = [&](size_t i, const char* s) { return argv.size() > i && argv[i] == s; };
    const bool json = has(1, "-j");
    const size_t o = json ? 1 : 0;  // words shift by one after -j
    if (!has(3 + o, "bridge") || argv.size() < 5 + o)
      return ProcessResult{1, "", "FakeNft: unexpected command\n"};
    const std::string& table = argv[4 + o];
    auto it = tables.find(table);
    auto missing = [&] {
      return ProcessResult{1, "",
                           "Error: No such file or directory\nlist table bridge " + table + "\n"};
    };
    if (has(1, "add") && has(2, "table")) {
      tables[table];
      return ProcessResult{0, "", ""};
    }
    if (has(1, "add") && (has(2, "chain") || has(2, "rule"))) {
      if (it == tables.end()) return missing();
      if (has(2, "rule")) it->second.push_back({argv.begin() + 6, argv.end()});
      return ProcessResult{0, "", ""};
    }
    if (has(1 + o, "list") && has(2 + o, "table")) {
      if (it == tables.end()) return missing();
      if (!json) return ProcessResult{0, "table bridge " + table + " {\n}\n", ""};
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
  // The rule words port_loss writes, as nft -j lists them back.
  static Json ListJson(const std::string& table,
                       const std::vector<std::vector<std::string>>& rules) {
    Json items = Json::array({{{"table", {{"family", "bridge"}, {"name", table}}}}});
    for (const auto& words : rules) {
      Json expr = Json::array();
      for (size_t i = 0; i < words.size(); ++i) {
        if (words[i] == "oifname" && i + 1 < words.size()) {
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
          {{"rule",
            {{"family", "bridge"}, {"table", table}, {"chain", "forward"}, {"expr", expr}}}});
    }
    return {{"nftables", items}};
  }

  FakeNetKernel* net_;
};

}  // namespace fdrill
