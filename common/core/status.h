// Status: the one error type of fdrill. A Status is either ok or carries a
// code and a message; Annotate() prefixes context on the way up, so an error
// that reaches main() reads like "n1: link_rate fab0: tc: Cannot find device".
// Cheap to copy; no exceptions cross project code.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace fdrill {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the user gave us something wrong (scenario, flag)
  kNotFound,            // a target that does not exist
  kUnavailable,         // an agent or a mechanism that cannot be reached now
  kFailedPrecondition,  // the machine is not in a state we can act on
  kUnsupported,         // the mechanism does not exist on this node
  kNotInstalled,        // a program the mechanism runs is not installed (host/programs.h)
  kPermissionDenied,    // the caller may not ask this (role, lease, limits, panic latch)
  kDeadlineExceeded,
  kInternal,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "context: message". No-op when ok.
  Status Annotate(std::string_view context) const;

  // "invalid argument: ..." style, for logs and CLI output.
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status NotInstalled(std::string m) { return {StatusCode::kNotInstalled, std::move(m)}; }
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status DeadlineExceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

StatusCode StatusCodeFromName(std::string_view name);

}  // namespace fdrill
