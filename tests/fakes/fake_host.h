// Recording fakes of the host seam. FakeProcessRunner records every argv it
// is asked to run and answers from a script of canned results matched by
// argv prefix (first match wins; unmatched commands succeed with empty
// output). FakeSysFs is an in-memory file tree: a map from path to content,
// directories implied by the paths under them (or made with MakeDir).
// FakeProcessRunner's Run may be called from several threads at once, as
// the real runner's is (CheckRshReachesEveryHost asks 32 hosts at a time).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/host/host.h"
#include "tests/fakes/known_program.h"

namespace fdrill {

class FakeProcessRunner final : public ProcessRunner {
 public:
  struct Rule {
    std::vector<std::string> prefix;
    ProcessResult result;
    int times = -1;  // -1: forever; otherwise answer this many times then skip
  };

  // Answer commands starting with `prefix` with `result`.
  void On(std::vector<std::string> prefix, ProcessResult result, int times = -1) {
    rules_.push_back({std::move(prefix), std::move(result), times});
  }
  void OnOutput(std::vector<std::string> prefix, std::string out) {
    On(std::move(prefix), ProcessResult{0, std::move(out), ""});
  }
  void OnFail(std::vector<std::string> prefix, std::string err, int code = 2) {
    On(std::move(prefix), ProcessResult{code, "", std::move(err)});
  }

  Result<ProcessResult> Run(const std::vector<std::string>& argv, Duration) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(argv);
    ExpectKnownProgram(argv);
    for (auto& rule : rules_) {
      if (rule.times == 0 || rule.prefix.size() > argv.size()) continue;
      if (!std::equal(rule.prefix.begin(), rule.prefix.end(), argv.begin())) continue;
      if (rule.times > 0) --rule.times;
      return rule.result;
    }
    return ProcessResult{0, "", ""};
  }

  const std::vector<std::vector<std::string>>& calls() const { return calls_; }
  void ClearCalls() { calls_.clear(); }
  // Calls whose argv starts with prefix, e.g. {"tc", "qdisc", "replace"}.
  std::vector<std::vector<std::string>> CallsStartingWith(
      const std::vector<std::string>& prefix) const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : calls_) {
      if (c.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), c.begin()))
        out.push_back(c);
    }
    return out;
  }

 private:
  std::mutex mu_;  // Run's: the rules' counts and the calls
  std::vector<Rule> rules_;
  std::vector<std::vector<std::string>> calls_;
};

class FakeSysFs final : public SysFs {
 public:
  std::map<std::string, std::string> files;
  std::vector<std::pair<std::string, std::string>> writes;

  // sysfs attributes: DIR/NAME holding VALUE and the newline the kernel
  // prints after it.
  void SetAttrs(const std::string& dir,
                std::initializer_list<std::pair<std::string, std::string>> attrs) {
    for (const auto& [name, value] : attrs) files[dir + "/" + name] = value + "\n";
  }

  Result<std::string> Read(const std::string& path) override {
    auto it = files.find(path);
    if (it == files.end()) return NotFound("cannot read " + path + ": No such file or directory");
    return it->second;
  }
  Status Write(const std::string& path, const std::string& value) override {
    writes.emplace_back(path, value);
    files[path] = value;
    return Status::Ok();
  }
  bool Exists(const std::string& path) override {
    if (files.count(path)) return true;
    std::string dir = path + "/";
    for (const auto& [p, _] : files) {
      if (p.rfind(dir, 0) == 0) return true;
    }
    return false;
  }
  Status MakeDir(const std::string& path) override {
    dirs_made.push_back(path);
    files[path + "/"] = "";
    return Status::Ok();
  }
  Status RemoveDir(const std::string& path) override {
    dirs_removed.push_back(path);
    for (auto it = files.begin(); it != files.end();) {
      it = it->first.rfind(path + "/", 0) == 0 ? files.erase(it) : std::next(it);
    }
    return Status::Ok();
  }
  Status RemoveFile(const std::string& path) override {
    files_removed.push_back(path);
    files.erase(path);
    return Status::Ok();
  }
  // The immediate children of `dir` in the file map (a file "dir/a/b" makes
  // "a" an entry), sorted; NotFound when nothing lies under `dir`.
  Result<std::vector<std::string>> List(const std::string& dir) override {
    std::string prefix = dir + "/";
    std::vector<std::string> names;
    for (auto it = files.lower_bound(prefix); it != files.end() && it->first.rfind(prefix, 0) == 0;
         ++it) {
      std::string name = it->first.substr(prefix.size());
      name = name.substr(0, name.find('/'));
      if (!name.empty() && (names.empty() || names.back() != name)) names.push_back(name);
    }
    if (names.empty() && !files.count(prefix))
      return NotFound("cannot list " + dir + ": No such file or directory");
    return names;
  }
  // What a path is the same directory as (/proc/<pid>/root -> "/", or a
  // chroot's root); a path not here is NotFound.
  std::map<std::string, std::string> links;
  Result<bool> SameFile(const std::string& a, const std::string& b) override {
    auto it = links.find(a);
    if (it == links.end()) return NotFound("stat " + a + ": No such file or directory");
    return it->second == b;
  }
  std::vector<std::string> files_removed;
  std::vector<std::string> dirs_made;
  std::vector<std::string> dirs_removed;
};

}  // namespace fdrill
