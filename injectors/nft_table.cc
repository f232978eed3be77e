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

}  // namespace fdrill
