// YamlReader: the scenario loader's one way to read a YAML node (internal to
// harness/scenario). Every reader checks the node's type before converting it,
// so a wrong value is a Status naming FILE:LINE:COL and the key, never a
// yaml-cpp exception. Stateless apart from the file name and the directory
// that relative paths start at; safe to share between the section loaders.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/core/units.h"

namespace fdrill {

class YamlReader {
 public:
  // Any one duration, and a whole drill with its repeats: sums stay far
  // from overflow (scenario_fuzz feeds 10000 repeats of 168h).
  static constexpr Duration kMaxDuration = std::chrono::hours(168);
  static constexpr Duration kMaxDrill = std::chrono::hours(24 * 30);
  // What Dur accepts: 1ms to kMaxDuration.
  static constexpr UnitRange<Duration> kDurations{std::chrono::milliseconds(1), kMaxDuration};

  // `base_dir` resolves relative paths (fabric.hosts, topology).
  YamlReader(std::string file, std::string base_dir)
      : file_(std::move(file)), base_dir_(std::move(base_dir)) {}

  const std::string& file() const { return file_; }
  // PATH as written in the scenario, relative ones from base_dir.
  std::string Resolve(const std::string& path) const;

  // "FILE:LINE:COL: what" at AT's place.
  Status Error(const YAML::Node& at, const std::string& what) const;
  // MAP's keys all in `allowed`, else the first stranger with a hint.
  Status CheckKeys(const YAML::Node& map, const std::string& section,
                   const std::set<std::string>& allowed) const;

  // Scalars; `key` names the value in the error.
  Result<std::string> Str(const YAML::Node& n, const std::string& key) const;
  // An integer in [min, max]; outside it "KEY 0 is out of range: accepted 1..100".
  Result<int64_t> Int(const YAML::Node& n, const std::string& key, int64_t min, int64_t max) const;
  Result<bool> Bool(const YAML::Node& n, const std::string& key) const;
  Result<double> Number(const YAML::Node& n, const std::string& key) const;
  // A duration in kDurations; outside it "KEY: duration "200h" is out of
  // range: accepted 1ms..168h".
  Result<Duration> Dur(const YAML::Node& n, const std::string& key) const;
  // A time from a phase's start (`at`): zero allowed, at most kMaxDuration;
  // nullopt when NODE is not one.
  std::optional<Duration> Offset(const YAML::Node& n) const;
  // A name, a hostlist like n[1-3], or a non-empty list of them.
  Result<std::vector<std::string>> StrList(const YAML::Node& n, const std::string& key) const;

  // YAML scalars to JSON: integers and booleans keep their type, the rest
  // (durations, rates, names) are strings for the injector's parser.
  Json ToJson(const YAML::Node& n) const;

 private:
  std::string file_;
  std::string base_dir_;
};

}  // namespace fdrill
