#include "workloads/world.h"

#include <string>

namespace fdrill {

namespace {
constexpr const char* kPeerFailure = "another rank failed (see its message)";
}  // namespace

Status AgreeAllOk(World& world, const Status& local) {
  Result<int64_t> any_failed = world.MaxInt64(local.ok() ? 0 : 1);
  if (!any_failed.ok()) return any_failed.status();
  if (!local.ok()) return local;
  if (*any_failed != 0) return Unavailable(kPeerFailure);
  return Status::Ok();
}

bool IsPeerFailure(const Status& status) {
  return status.code() == StatusCode::kUnavailable && status.message() == kPeerFailure;
}

}  // namespace fdrill
