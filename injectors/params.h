// ParamReader: reads an injector's params object and names the offending key
// in every error ("params.rate: bad rate ..."). Finish() rejects keys nobody
// asked for, with a "did you mean" hint.
#pragma once

#include <set>
#include <string>

#include "harness/core/json.h"
#include "harness/core/result.h"
#include "harness/core/units.h"

namespace fdrill {

class ParamReader {
 public:
  explicit ParamReader(const Json& params) : params_(params) {}

  Result<std::string> String(const std::string& key);  // required
  Result<std::string> String(const std::string& key, std::string def);
  Result<Duration> Dur(const std::string& key);  // required
  Result<Duration> Dur(const std::string& key, Duration def);
  Result<uint64_t> Rate(const std::string& key);  // required, bit/s
  Result<uint64_t> Size(const std::string& key, uint64_t def);
  Result<int64_t> Int(const std::string& key, int64_t def, int64_t min, int64_t max);
  Result<bool> Bool(const std::string& key, bool def);
  bool Has(const std::string& key) const { return params_.is_object() && params_.contains(key); }
  // Unknown keys are an error; call after reading every key.
  Status Finish() const;

 private:
  const Json* Find(const std::string& key);
  const Json& params_;
  std::set<std::string> seen_;
};

}  // namespace fdrill
