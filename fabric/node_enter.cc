#include "fabric/node_enter.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace fdrill {

namespace {

Status SetNs(const std::string& path, int nstype, const char* what) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return FailedPrecondition(std::string("open ") + what + " namespace " + path + ": " +
                              strerror(errno));
  int rc = setns(fd, nstype);
  int err = errno;
  close(fd);
  if (rc != 0)
    return FailedPrecondition(std::string("setns ") + what + " " + path + ": " + strerror(err));
  return Status::Ok();
}

// A mount namespace of our own with a sysfs of the node's network
// namespace on /sys (sysfs shows the netns of whoever mounts it), as `ip
// netns exec` does. The cgroup tree at /sys/fs/cgroup is moved aside to
// `park` (a fresh directory of this process in the node's TMPDIR) while the
// new sysfs goes on, then moved back onto it, so cgroup faults act on the
// same hierarchy. Mount events stay ours (MS_SLAVE): nothing propagates
// back to the machine.
Status RemountSys(const std::string& tmpdir) {
  auto fail = [](const std::string& what) {
    return FailedPrecondition(what + ": " + strerror(errno));
  };
  if (unshare(CLONE_NEWNS) != 0) return fail("unshare mount namespace");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    return fail("mount --make-rslave /");
  const std::string park = tmpdir + "/.fdrill-cgroup-" + std::to_string(getpid());
  if (mkdir(park.c_str(), 0700) != 0 && errno != EEXIST) return fail("mkdir " + park);
  // EINVAL: /sys/fs/cgroup is no mount point here; nothing to carry over.
  const bool moved = mount("/sys/fs/cgroup", park.c_str(), nullptr, MS_MOVE, nullptr) == 0;
  if (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return fail("mount sysfs on /sys");
  if (moved && mount(park.c_str(), "/sys/fs/cgroup", nullptr, MS_MOVE, nullptr) != 0)
    return fail("move the cgroup tree back onto /sys/fs/cgroup");
  rmdir(park.c_str());
  return Status::Ok();
}

// In the mount namespace RemountSys made: the node's own directories over
// the machine's (kNodeLocalDirs).
Status BindNodeFiles(const std::string& files_root) {
  for (const std::string& dir : kNodeLocalDirs) {
    const std::string own = files_root + dir;
    if (mount(own.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0)
      return FailedPrecondition("bind the node's " + own + " over " + dir + ": " + strerror(errno) +
                                (errno == ENOENT ? " (`fdrill fabric up` makes both)" : ""));
  }
  return Status::Ok();
}

}  // namespace

Status EnterNode(const std::string& netns_path, const std::string& uts_path,
                 const std::string& tmpdir, const std::string& files_root) {
  if (Status s = SetNs(netns_path, CLONE_NEWNET, "network"); !s.ok()) return s;
  if (Status s = SetNs(uts_path, CLONE_NEWUTS, "UTS"); !s.ok()) return s;
  if (Status s = RemountSys(tmpdir); !s.ok()) return s;
  if (!files_root.empty()) {
    if (Status s = BindNodeFiles(files_root); !s.ok()) return s;
  }
  if (setenv("TMPDIR", tmpdir.c_str(), 1) != 0)
    return Internal(std::string("setenv TMPDIR: ") + strerror(errno));
  return Status::Ok();
}

Status EnterNode(const FabricNode& node) {
  return EnterNode(node.NetnsPath(), node.uts_path, node.tmpdir, node.files_root)
      .Annotate(node.name);
}

Status ExecInNode(const FabricNode& node, const std::vector<std::string>& argv) {
  if (argv.empty()) return InvalidArgument("no command to run in " + node.name);
  if (Status s = EnterNode(node); !s.ok()) return s;
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  execvp(cargv[0], cargv.data());
  return NotFound(node.name + ": cannot run " + argv[0] + ": " + strerror(errno));
}

std::vector<std::string> RshShellArgv(const std::vector<std::string>& words) {
  std::string joined;
  for (const auto& w : words) {
    if (!joined.empty()) joined += ' ';
    joined += w;
  }
  return {"/bin/sh", "-c", joined};
}

Status RshExec(const FabricState& state, const std::vector<std::string>& host_and_words) {
  if (host_and_words.size() < 2) return InvalidArgument("usage: fdrill fabric rsh HOST COMMAND...");
  const std::string& host = host_and_words[0];
  const FabricNode* node = state.FindNode(host);
  if (node == nullptr) return NotFound("rsh: no fabric node has address or name " + host);
  std::vector<std::string> words(host_and_words.begin() + 1, host_and_words.end());
  return ExecInNode(*node, RshShellArgv(words));
}

}  // namespace fdrill
