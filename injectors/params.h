// ParamReader: reads an injector's params object and names the offending key
// in every error, always first ("params.rate: bad rate ..."; the scenario
// loader points at that key's line by it). Finish() rejects keys nobody
// asked for, with a "did you mean" hint. Every number has a range: a value
// outside it reads "params.KEY: rate "99tbit" is out of range: accepted
// 8kbit..10tbit" (units.h), "params.count: 5000 is out of range: accepted
// 1..1000".
#pragma once

#include <set>
#include <string>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

class ParamReader {
 public:
  explicit ParamReader(const Json& params) : params_(params) {}

  Result<std::string> String(const std::string& key);  // required
  Result<std::string> String(const std::string& key, std::string def);
  // A duration param: kParamDurations unless the injector narrows it.
  static constexpr UnitRange<Duration> kParamDurations{std::chrono::microseconds(1),
                                                       std::chrono::hours(168)};
  Result<Duration> Dur(const std::string& key,
                       UnitRange<Duration> range = kParamDurations);  // required
  Result<Duration> Dur(const std::string& key, Duration def,
                       UnitRange<Duration> range = kParamDurations);
  Result<uint64_t> Rate(const std::string& key);  // required, bit/s, kRates
  // A size param: 1B..16TiB (kSizes but for zero) unless narrowed.
  static constexpr UnitRange<uint64_t> kParamSizes{1, kSizes.hi};
  Result<uint64_t> Size(const std::string& key, uint64_t def,
                        UnitRange<uint64_t> range = kParamSizes);
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
