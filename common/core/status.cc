#include "common/core/status.h"

namespace fdrill {

namespace {
struct CodeName {
  StatusCode code;
  const char* name;
};
constexpr CodeName kCodeNames[] = {
    {StatusCode::kOk, "ok"},
    {StatusCode::kInvalidArgument, "invalid_argument"},
    {StatusCode::kNotFound, "not_found"},
    {StatusCode::kUnavailable, "unavailable"},
    {StatusCode::kFailedPrecondition, "failed_precondition"},
    {StatusCode::kUnsupported, "unsupported"},
    {StatusCode::kNotInstalled, "not_installed"},
    {StatusCode::kPermissionDenied, "permission_denied"},
    {StatusCode::kDeadlineExceeded, "deadline_exceeded"},
    {StatusCode::kInternal, "internal"},
};
}  // namespace

const char* StatusCodeName(StatusCode code) {
  for (const auto& c : kCodeNames) {
    if (c.code == code) return c.name;
  }
  return "internal";
}

StatusCode StatusCodeFromName(std::string_view name) {
  for (const auto& c : kCodeNames) {
    if (name == c.name) return c.code;
  }
  return StatusCode::kInternal;
}

Status Status::Annotate(std::string_view context) const {
  if (ok() || context.empty()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace fdrill
