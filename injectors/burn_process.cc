#include "injectors/burn_process.h"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

namespace fdrill {

namespace {

std::atomic<int> g_burn_seq{0};

}  // namespace

std::string CgroupV2Mount(const std::string& mountinfo) {
  // "36 25 0:31 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw"
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string fstype;
    after >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream before(line.substr(0, dash));
    std::string id, parent, dev, root, mount;
    before >> id >> parent >> dev >> root >> mount;
    if (!mount.empty()) return mount;
  }
  return "";
}

Status BurnFault::Check() {
  if (host_.procs == nullptr) return Unsupported(Kind() + ": this agent has no process table");
  return Status::Ok();
}

std::string BurnCgroupPrefix(ProcessTable& procs) {
  // "net:[4026531840]" -> "4026531840"; a table without one gives "0".
  std::string digits;
  for (char c : procs.OwnNetNs())
    if (c >= '0' && c <= '9') digits += c;
  return std::string(kBurnExe) + "-" + (digits.empty() ? "0" : digits) + "-";
}

Status BurnFault::Capture() {
  if (Status s = Check(); !s.ok()) return s;
  cgroup_.clear();
  if (auto info = host_.sysfs->Read("/proc/self/mountinfo"); info.ok()) {
    std::string mount = CgroupV2Mount(*info);
    if (!mount.empty()) {
      cgroup_ = mount + "/" + BurnCgroupPrefix(*host_.procs) +
                std::to_string(host_.procs->OwnPid()) + "-" +
                std::to_string(g_burn_seq.fetch_add(1));
    }
  }
  return Status::Ok();
}

Json BurnFault::Saved() const {
  return {{"cgroup", cgroup_}, {"pid", pid_}, {"start_ticks", start_ticks_}};
}

Status BurnFault::Load(const Json& saved) {
  cgroup_ = saved.value("cgroup", "");
  pid_ = saved.value("pid", 0);
  start_ticks_ = saved.value("start_ticks", uint64_t{0});
  return Status::Ok();
}

std::vector<std::string> BurnFault::Argv() const {
  std::vector<std::string> argv = {kBurnExe};
  for (const auto& a : spec_.args) argv.push_back(a);
  argv.push_back(std::to_string(host_.procs->OwnPid()));
  return argv;
}

Status BurnFault::Apply() {
  if (!cgroup_.empty()) {
    if (Status s = host_.sysfs->MakeDir(cgroup_); !s.ok()) return s.Annotate(Kind());
  }
  auto pid = host_.procs->Spawn(Argv());
  if (!pid.ok()) return pid.status().Annotate(Kind());
  pid_ = *pid;
  auto info = host_.procs->Inspect(pid_);
  if (!info.ok())
    return FailedPrecondition(Kind() + ": " + kBurnExe + " (pid " + std::to_string(pid_) +
                              ") exited at once");
  start_ticks_ = info->start_ticks;
  if (!cgroup_.empty()) {
    if (Status s = host_.sysfs->Write(cgroup_ + "/cgroup.procs", std::to_string(pid_)); !s.ok()) {
      return s.Annotate(Kind() + ": moving pid " + std::to_string(pid_) + " into " + cgroup_);
    }
  }
  // In force only once loaded (mem_pressure: its pages are touched).
  const auto deadline = std::chrono::steady_clock::now() + spec_.load_timeout;
  for (;;) {
    auto now = host_.procs->Inspect(pid_);
    if (!now.ok() || now->start_ticks != start_ticks_) {
      return FailedPrecondition(Kind() + ": " + kBurnExe + " (pid " + std::to_string(pid_) +
                                ") exited while loading");
    }
    Status loaded = Loaded(*now);
    if (loaded.ok()) return Status::Ok();
    if (std::chrono::steady_clock::now() >= deadline)
      return loaded.Annotate(Kind() + ": not loaded in time");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status BurnFault::Verify() {
  auto info = host_.procs->Inspect(pid_);
  if (!info.ok() || info->start_ticks != start_ticks_ || info->state == 'Z') {
    return FailedPrecondition(Kind() + ": " + kBurnExe + " (pid " + std::to_string(pid_) +
                              ") is not running");
  }
  if (!cgroup_.empty()) {
    auto procs = host_.sysfs->Read(cgroup_ + "/cgroup.procs");
    if (!procs.ok()) return procs.status();
    std::istringstream in(*procs);
    bool found = false;
    for (int p; in >> p;) found = found || p == pid_;
    if (!found)
      return FailedPrecondition(Kind() + ": pid " + std::to_string(pid_) + " is not in " + cgroup_);
  }
  return Loaded(*info);
}

Status BurnFault::Revert() {
  if (pid_ > 0) {
    auto info = host_.procs->Inspect(pid_);
    if (info.ok() && info->start_ticks == start_ticks_) {
      if (Status s = host_.procs->Signal(pid_, SIGKILL);
          !s.ok() && s.code() != StatusCode::kNotFound) {
        return s.Annotate(Kind());
      }
      host_.procs->Reap(pid_);
    }
    pid_ = 0;
  }
  if (!cgroup_.empty() && host_.sysfs->Exists(cgroup_)) {
    // A sweep after an agent crash knows only the cgroup; anything still in
    // it is ours. cgroup.kill needs kernel 5.14+; the pid kill above covers
    // the live case on older kernels.
    if (auto procs = host_.sysfs->Read(cgroup_ + "/cgroup.procs"); procs.ok() && !procs->empty()) {
      (void)host_.sysfs->Write(cgroup_ + "/cgroup.kill", "1");
    }
    Status removed = Status::Ok();
    for (int attempt = 0; attempt < 50;
         ++attempt) {  // rmdir is EBUSY until the killed tasks are gone
      removed = host_.sysfs->RemoveDir(cgroup_);
      if (removed.ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!removed.ok()) return removed.Annotate(Kind());
  }
  return Status::Ok();
}

Status BurnFault::VerifyReverted() {
  if (!cgroup_.empty() && host_.sysfs->Exists(cgroup_)) {
    return FailedPrecondition(Kind() + ": " + cgroup_ + " still exists");
  }
  return Status::Ok();
}

std::vector<std::string> BurnFault::Mechanism() const {
  std::vector<std::string> argv = {kBurnExe};
  for (const auto& a : spec_.args) argv.push_back(a);
  argv.push_back("<agent pid>");
  return {"apply: " + JoinArgv(argv) +
              " (dies with the agent; in its own cgroup v2 group when the node has one)",
          "revert: kill -KILL <its pid>, cgroup.kill, rmdir the group"};
}

}  // namespace fdrill
