#include "injectors/nft_table.h"

namespace fdrill {

Result<bool> NftTableExists(ProcessRunner& runner, const std::string& family,
                            const std::string& table, const std::string& who) {
  auto r = runner.Run({"nft", "list", "table", family, table}, std::chrono::seconds(5));
  if (!r.ok()) return r.status().Annotate(who);
  if (r->exit_code == 0) return true;
  if (r->err.find("No such file or directory") != std::string::npos) return false;
  return FailedPrecondition(who + ": `nft list table " + family + " " + table + "` exited " +
                            std::to_string(r->exit_code) + ": " + r->err);
}

void AppendNftShare(std::vector<std::string>& rule, uint64_t micro_percent) {
  if (micro_percent >= kNftWhole) return;
  for (const char* a : {"numgen", "random", "mod"}) rule.push_back(a);
  rule.push_back(std::to_string(kNftWhole));
  rule.push_back("lt");
  rule.push_back(std::to_string(micro_percent));
}

bool IsNftShare(const Json& match, uint64_t micro_percent) {
  const Json& left = match.value("left", Json::object());
  return left.contains("numgen") && left["numgen"].value("mod", uint64_t{0}) == kNftWhole &&
         match.value("op", "") == "<" && match.value("right", Json()) == micro_percent;
}

}  // namespace fdrill
