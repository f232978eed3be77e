// Result<T>: a value or a non-ok Status. Access value() only after ok().
#pragma once

#include <cassert>
#include <optional>
#include <utility>

#include "common/core/status.h"

namespace fdrill {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "Result from an ok Status carries no value");
    if (status_.ok()) status_ = Internal("Result constructed from ok Status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

  Result Annotate(std::string_view context) && {
    if (ok()) return std::move(*this);
    return Result(status_.Annotate(context));
  }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace fdrill
