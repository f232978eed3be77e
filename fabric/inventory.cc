#include "fabric/inventory.h"

#include <algorithm>
#include <sstream>

namespace fdrill {

namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::string Basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::vector<std::string> ParseNetnsList(const std::string& out) {
  std::vector<std::string> names;
  for (const auto& line : Lines(out)) {
    std::string name = line.substr(0, line.find(' '));
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

std::vector<std::string> ParseLinkNames(const std::string& out) {
  std::vector<std::string> names;
  for (const auto& line : Lines(out)) {
    auto colon = line.find(": ");
    if (colon == std::string::npos) continue;
    std::string rest = line.substr(colon + 2);
    std::string name = rest.substr(0, rest.find_first_of("@:"));
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

std::vector<std::string> ParseMountsUnder(const std::string& mountinfo, const std::string& dir) {
  std::vector<std::string> mounts;
  for (const auto& line : Lines(mountinfo)) {
    // "45 27 0:4 uts:[4026532319] /run/fdrill/fabric/n0/uts rw - nsfs nsfs rw":
    // the fifth field is the mount point.
    std::istringstream fields(line);
    std::string f[5];
    for (auto& x : f) fields >> x;
    if (f[4] == dir || f[4].rfind(dir + "/", 0) == 0) mounts.push_back(f[4]);
  }
  std::stable_sort(mounts.begin(), mounts.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return mounts;
}

std::vector<std::string> WithPrefix(const std::vector<std::string>& names,
                                    const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    if (n.rfind(prefix, 0) == 0) out.push_back(n);
  }
  return out;
}

int FabricInventory::NodeCount(const FabricLayout& layout) const {
  int count = 0;
  for (const auto& ns : netns) {
    std::string rest = ns.substr(layout.netns_prefix.size());
    if (rest.size() > 1 && rest[0] == 'n' &&
        rest.find_first_not_of("0123456789", 1) == std::string::npos) {
      ++count;
    }
  }
  return count;
}

Result<FabricInventory> TakeInventory(const FabricLayout& layout, ProcessRunner& runner,
                                      SysFs& fs) {
  FabricInventory inv;
  auto netns = RunChecked(runner, {"ip", "netns", "list"});
  if (!netns.ok()) return netns.status();
  inv.netns = WithPrefix(ParseNetnsList(*netns), layout.netns_prefix);
  auto links = RunChecked(runner, {"ip", "-o", "link", "show"});
  if (!links.ok()) return links.status();
  inv.root_links = WithPrefix(ParseLinkNames(*links), layout.root_prefix);
  auto mountinfo = fs.Read("/proc/self/mountinfo");
  if (!mountinfo.ok()) return mountinfo.status();
  inv.mounts = ParseMountsUnder(*mountinfo, layout.state_dir);
  inv.state_dir_exists = fs.Exists(layout.state_dir);
  inv.state_file_exists = fs.Exists(layout.StateFile());
  return inv;
}

std::vector<std::string> ReadCmdline(SysFs& fs, int pid) {
  std::vector<std::string> argv;
  auto cmdline = fs.Read("/proc/" + std::to_string(pid) + "/cmdline");
  if (!cmdline.ok()) return argv;
  std::string word;
  for (char c : *cmdline) {
    if (c == '\0') {
      argv.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) argv.push_back(word);
  return argv;
}

namespace {

bool NamesAgent(const std::vector<std::string>& argv, const std::string& agent_bin,
                const std::string& node_name) {
  auto names_agent = [&](size_t i) {
    return i < argv.size() && (argv[i] == agent_bin || Basename(argv[i]) == Basename(agent_bin));
  };
  if (!names_agent(0) && !names_agent(1)) return false;
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--node" && argv[i + 1] == node_name) return true;
  }
  return false;
}

}  // namespace

namespace {

// False when the process lives under another root directory than ours
// (/proc/<pid>/root and / are not the same directory: a chroot, another
// "machine" on this kernel whose fabric may use the same paths as ours —
// either way round, which readlink cannot tell from inside the chroot);
// true when it is ours or cannot be read.
bool SharesOurRoot(SysFs& fs, int pid) {
  auto same = fs.SameFile("/proc/" + std::to_string(pid) + "/root", "/");
  return !same.ok() || *same;
}

}  // namespace

bool ProcessGone(SysFs& fs, int pid) {
  if (pid <= 0) return true;
  auto stat = fs.Read("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return true;
  // "PID (COMM) S ...": the state follows the last ')'.
  const size_t paren = stat->rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat->size()) return false;
  const char state = (*stat)[paren + 2];
  return state == 'Z' || state == 'X';
}

bool CmdlineContains(SysFs& fs, int pid, const std::string& needle) {
  if (pid <= 0 || needle.empty()) return false;
  const std::vector<std::string> argv = ReadCmdline(fs, pid);
  if (argv.empty()) return false;
  std::string joined = " ";
  for (const auto& word : argv) joined += word + " ";
  return joined.find(needle) != std::string::npos;
}

std::vector<int> FindByCmdline(SysFs& fs, const std::string& needle) {
  std::vector<int> pids;
  auto entries = fs.List("/proc");
  if (!entries.ok() || needle.empty()) return pids;
  for (const auto& entry : *entries) {
    if (entry.empty() || entry.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(entry);
    if (CmdlineContains(fs, pid, needle) && SharesOurRoot(fs, pid)) pids.push_back(pid);
  }
  return pids;
}

bool AgentAlive(SysFs& fs, const std::string& agent_bin, const std::string& node_name, int pid) {
  if (pid <= 0) return false;
  return NamesAgent(ReadCmdline(fs, pid), agent_bin, node_name);
}

std::vector<int> FindAgents(SysFs& fs, const std::string& agent_bin, const std::string& node_name,
                            const std::string& state_dir) {
  std::vector<int> pids;
  auto entries = fs.List("/proc");
  if (!entries.ok()) return pids;
  for (const auto& entry : *entries) {
    if (entry.empty() || entry.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(entry);
    const std::vector<std::string> argv = ReadCmdline(fs, pid);
    if (!NamesAgent(argv, agent_bin, node_name) || !SharesOurRoot(fs, pid)) continue;
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--state-dir" && argv[i + 1] == state_dir) {
        pids.push_back(pid);
        break;
      }
    }
  }
  return pids;
}

}  // namespace fdrill
