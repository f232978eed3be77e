#include "agents/panic_latch.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/core/files.h"
#include "common/core/json.h"
#include "common/core/units.h"

namespace fdrill {

PanicLatch::PanicLatch(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return;
  Result<std::string> text = ReadWholeFile(path_);
  Json j = text.ok() ? Json::parse(*text, nullptr, /*allow_exceptions=*/false) : Json();
  if (j.is_discarded() || !j.is_object()) {
    j = Json{{"by", "?"},
             {"reason", path_ + " exists but cannot be read; treated as latched"},
             {"at_ns", 0}};
  }
  state_ = std::move(j);
}

void PanicLatch::Latch(const std::string& by, const std::string& reason, int64_t wall_ns) {
  state_ = Json{{"by", by}, {"reason", reason}, {"at_ns", wall_ns}};
}

Status PanicLatch::Save() {
  if (!state_) return Status::Ok();
  state_->erase("unsaved");
  if (Status s = WriteFileAtomically(path_, DumpJson(*state_) + "\n"); !s.ok()) {
    s = s.Annotate("panic latch");
    (*state_)["unsaved"] = s.message();
    return s;
  }
  return Status::Ok();
}

Status PanicLatch::Clear() {
  if (unlink(path_.c_str()) != 0 && errno != ENOENT)
    return FailedPrecondition("clearing the panic latch " + path_ + ": " + std::strerror(errno));
  state_.reset();
  return Status::Ok();
}

Status PanicLatch::Refusal(const std::string& type) const {
  const std::string at = FormatUtcSeconds(state_->value("at_ns", int64_t{0}));
  const std::string by = state_->value("by", "?");
  const std::string reason = state_->value("reason", "");
  return PermissionDenied("\"" + type + "\" refused: `fdrill panic` latched this node at " + at +
                          " (by " + (by.empty() ? std::string("an --insecure controller") : by) +
                          (reason.empty() ? "" : ": " + reason) +
                          "); nothing is applied until `fdrill panic --clear`");
}

}  // namespace fdrill
