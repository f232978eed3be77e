// Issue 16: every external program fdrill, its agent, the fabric and the
// scripts run is a row of common/host/programs.cc, and every row's package
// is installed by the set-up (scripts/setup-common.sh's FDRILL_PACKAGES, or
// Debian's Essential / Priority: required set that every Debian 12 system
// has), or by the one script that uses it, or is optional with its degraded
// behaviour named. dpkg's own file lists confirm that the package really
// ships the program. The recording fakes (tests/fakes/known_program.h) fail
// any test that runs a program the table lacks.
#include "common/host/programs.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "common/host/real_process_runner.h"

namespace fdrill {
namespace {

// The words of bash array NAME=( ... ) in `script`, comments dropped.
std::set<std::string> BashArray(const std::string& script, const std::string& name) {
  std::set<std::string> words;
  size_t at = script.find("\n" + name + "=(");
  if (at == std::string::npos) return words;
  size_t from = script.find('(', at) + 1;
  size_t to = script.find(')', from);
  std::istringstream lines(script.substr(from, to - from));
  for (std::string line; std::getline(lines, line);) {
    line = line.substr(0, line.find('#'));
    std::istringstream ws(line);
    for (std::string w; ws >> w;) words.insert(w);
  }
  return words;
}

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(FDRILL_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The rows whose package the set-up does not install: not in `set_up`
// (FDRILL_PACKAGES) and not in `base` (Essential or Priority: required).
std::vector<std::string> MissingFromSetUp(std::span<const ExternalProgram> rows,
                                          const std::set<std::string>& set_up,
                                          const std::set<std::string>& base) {
  std::vector<std::string> missing;
  for (const auto& row : rows) {
    if (row.need != ProgramNeed::kSetUp) continue;
    std::string package(row.package);
    if (!set_up.count(package) && !base.count(package)) {
      missing.push_back(std::string(row.name) + " (" + package + ")");
    }
  }
  return missing;
}

class DebianPackages {
 public:
  bool available() { return FindInPath("dpkg-query").ok(); }
  // "yes required", "no optional", ...; "" when dpkg does not know it.
  std::string EssentialPriority(const std::string& package) {
    auto r = runner_.Run({"dpkg-query", "-W", "-f=${Essential} ${Priority}", package},
                         std::chrono::seconds(30));
    return r.ok() && r->exit_code == 0 ? r->out : "";
  }
  // Path -> the packages dpkg says own it, for every path of `paths` it
  // knows (one dpkg-query call: each reads dpkg's whole database).
  std::map<std::string, std::set<std::string>> Owners(const std::vector<std::string>& paths) {
    std::map<std::string, std::set<std::string>> owners;
    std::vector<std::string> argv = {"dpkg-query", "-S"};
    argv.insert(argv.end(), paths.begin(), paths.end());
    auto r = runner_.Run(argv, std::chrono::seconds(120));
    if (!r.ok()) return owners;  // exit 1 only says some path is unknown
    std::istringstream lines(r->out);
    for (std::string line; std::getline(lines, line);) {
      size_t colon = line.find(": ");
      if (colon == std::string::npos) continue;
      std::set<std::string>& names = owners[line.substr(colon + 2)];
      std::istringstream list(line.substr(0, colon));  // "a, b: /path" when several
      for (std::string n; std::getline(list, n, ',');) {
        n.erase(0, n.find_first_not_of(' '));
        names.insert(n.substr(0, n.find(':')));  // "pkg:amd64"
      }
    }
    return owners;
  }

 private:
  RealProcessRunner runner_;
};

// Where `name` may live: as PATH finds it (sbin too, for non-root), where
// its links lead (alternatives, llvm-14), and the /bin and /sbin names that
// Debian 12's packages still register (usrmerge aliases).
std::vector<std::string> Candidates(const std::string& name) {
  std::vector<std::string> out;
  for (const char* dir : {"/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/", "/usr/local/bin/"}) {
    std::string path = dir + name;
    if (access(path.c_str(), X_OK) != 0) continue;
    out.push_back(path);
    char real[4096];
    if (realpath(path.c_str(), real) != nullptr) out.push_back(real);
  }
  return out;
}

TEST(ExternalPrograms, EveryRowIsWellFormedAndNamedOnce) {
  std::set<std::string_view> names;
  for (const auto& row : ExternalPrograms()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " is listed twice";
    EXPECT_FALSE(row.used_by.empty()) << row.name;
    EXPECT_EQ(row.package.empty(), row.need == ProgramNeed::kBuilt) << row.name;
    if (row.need == ProgramNeed::kOptional) {
      EXPECT_FALSE(row.without.empty()) << row.name << ": optional, but what then?";
    }
  }
  EXPECT_NE(FindExternalProgram("/usr/sbin/nft"), nullptr);
  EXPECT_EQ(FindExternalProgram("sh-is-not-run"), nullptr);
}

TEST(ExternalPrograms, TheGuardNamesAPackageDroppedFromTheSetUp) {
  std::set<std::string> set_up =
      BashArray(ReadSource("scripts/setup-common.sh"), "FDRILL_PACKAGES");
  ASSERT_TRUE(set_up.count("iproute2")) << "FDRILL_PACKAGES not found in scripts/setup-common.sh";
  std::set<std::string> dropped = set_up;
  dropped.erase("nftables");
  std::vector<std::string> missing = MissingFromSetUp(ExternalPrograms(), dropped, {"coreutils"});
  EXPECT_NE(std::find(missing.begin(), missing.end(), "nft (nftables)"), missing.end());
}

TEST(ExternalPrograms, EverySetUpPackageIsInstalledByTheSetUpOrIsDebianBase) {
  std::set<std::string> set_up =
      BashArray(ReadSource("scripts/setup-common.sh"), "FDRILL_PACKAGES");
  DebianPackages dpkg;
  if (!dpkg.available())
    GTEST_SKIP() << "no dpkg-query: not a Debian system, the base set is unknown";
  std::set<std::string> base;
  for (const auto& row : ExternalPrograms()) {
    std::string package(row.package);
    if (row.need != ProgramNeed::kSetUp || set_up.count(package)) continue;
    std::string ep = dpkg.EssentialPriority(package);
    if (ep.rfind("yes ", 0) == 0 || ep.find("required") != std::string::npos) base.insert(package);
  }
  std::vector<std::string> missing = MissingFromSetUp(ExternalPrograms(), set_up, base);
  EXPECT_TRUE(missing.empty())
      << "the set-up does not install: " << testing::PrintToString(missing)
      << " — add the package to FDRILL_PACKAGES in scripts/setup-common.sh";
}

TEST(ExternalPrograms, TheDemoInstallsASubsetOfTheSetUp) {
  const std::string setup = ReadSource("scripts/setup-common.sh");
  std::set<std::string> all = BashArray(setup, "FDRILL_PACKAGES");
  std::set<std::string> demo = BashArray(setup, "FDRILL_DEMO_PACKAGES");
  ASSERT_TRUE(demo.count("openmpi-bin")) << "FDRILL_DEMO_PACKAGES not found";
  for (const std::string& p : demo) {
    EXPECT_TRUE(all.count(p)) << p << " is installed by ./demo.sh but not by ./test.sh";
  }
  // What the demo's drill runs on the emulated fabric (ip, tc) and its build.
  for (const char* p : {"iproute2", "cmake", "libopenmpi-dev"}) EXPECT_TRUE(demo.count(p)) << p;
}

TEST(ExternalPrograms, ScriptPackagesAreInstalledByTheirScript) {
  for (const auto& row : ExternalPrograms()) {
    if (row.need != ProgramNeed::kScript) continue;
    std::string script = ReadSource(std::string(row.installed_by));
    ASSERT_FALSE(script.empty()) << row.installed_by << " is not there";
    EXPECT_TRUE(BashArray(script, "CHECK_PACKAGES").count(std::string(row.package)))
        << row.installed_by << " does not install " << row.package << " for " << row.name;
  }
}

TEST(ExternalPrograms, EachInstalledProgramComesFromItsPackage) {
  DebianPackages dpkg;
  if (!dpkg.available()) GTEST_SKIP() << "no dpkg-query: not a Debian system";
  std::map<std::string_view, std::vector<std::string>> where;
  std::vector<std::string> all;
  for (const auto& row : ExternalPrograms()) {
    if (row.need == ProgramNeed::kBuilt) continue;
    where[row.name] = Candidates(std::string(row.name));
    all.insert(all.end(), where[row.name].begin(), where[row.name].end());
  }
  auto owners = dpkg.Owners(all);
  for (const auto& row : ExternalPrograms()) {
    if (row.need == ProgramNeed::kBuilt) continue;
    const auto& paths = where[row.name];
    if (paths.empty()) {
      // The set-up ran (./test.sh installs before it tests): a set-up
      // program that is not there means the table names the wrong package.
      EXPECT_NE(row.need, ProgramNeed::kSetUp)
          << row.name << " is not installed, though the set-up installs " << row.package;
      continue;
    }
    std::set<std::string> found;
    for (const auto& path : paths) found.insert(owners[path].begin(), owners[path].end());
    EXPECT_TRUE(found.count(std::string(row.package)))
        << row.name << " at " << paths.front() << " belongs to " << testing::PrintToString(found)
        << ", not " << row.package;
  }
}

TEST(ExternalPrograms, BuiltProgramsAreInTheBuild) {
  for (const auto& row : ExternalPrograms()) {
    if (row.need != ProgramNeed::kBuilt) continue;
    std::string path = std::string(FDRILL_BIN_DIR) + "/" + std::string(row.name);
    EXPECT_EQ(access(path.c_str(), X_OK), 0) << path;
  }
}

TEST(ProgramMissing, IsNotInstalledAndNamesThePackage) {
  Status s = ProgramMissing("nft");
  EXPECT_TRUE(IsProgramMissing(s));
  EXPECT_EQ(s.message(),
            "nft is not installed (Debian package nftables): No such file or directory");
  EXPECT_FALSE(IsProgramMissing(NotFound("no interface fab9")));
  auto found = FindInPath("fdrill-no-such-program");
  EXPECT_TRUE(IsProgramMissing(found.status()));
  EXPECT_TRUE(FindInPath("sh").ok());
}

}  // namespace
}  // namespace fdrill
