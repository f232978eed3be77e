// nccl_env: the software lane throttle — NCCL environment restrictions for
// the next workload launch on this node: NCCL_P2P_DISABLE (no CUDA P2P over
// NVLink/PCIe; intra-node traffic through host memory), NCCL_NVLS_ENABLE=0
// (no NVLink SHARP), an NCCL_IB_HCA subset (fewer rails), NCCL_MAX_CTAS with
// its deprecated alias NCCL_MAX_NCHANNELS (fewer channels, less bandwidth).
// Reference §1.8 and the NCCL env table.
//
// Mechanism: Apply writes `<launch env dir>/nccl_env-<hash>.env`
// (common/host/launch_env.h); fdrill-collective exports it at start-up, so
// it acts on ranks started on this node while the fault is applied — a
// workload already running keeps its environment (NCCL reads it once, at
// init). Verify reads the file back; Revert removes it (safe twice, safe
// after a failed write). Nothing else on the node changes. The MPI backend
// does not read NCCL_*: the fault shows only with --backend nccl.
#include <functional>

#include "common/host/launch_env.h"
#include "injectors/injector.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

class NcclEnv final : public Fault {
 public:
  NcclEnv(Host host, std::map<std::string, std::string> env) : host_(host), env_(std::move(env)) {}

  Status Capture() override {
    if (host_.launch_env_dir.empty())
      return Unsupported("nccl_env: this agent has no launch environment directory");
    file_ = host_.launch_env_dir + "/nccl_env-" +
            std::to_string(std::hash<std::string>{}(FormatLaunchEnv(env_)) % 1000000007) + ".env";
    if (host_.sysfs->Exists(file_)) {
      return FailedPrecondition("nccl_env: " + file_ +
                                " exists already (another nccl_env with the same settings is "
                                "applied, or a drill left it: `fdrill-agent --revert-all`)");
    }
    return Status::Ok();
  }

  Json Saved() const override { return {{"file", file_}}; }
  Status Load(const Json& saved) override {
    file_ = saved.value("file", "");
    return Status::Ok();
  }

  Status Apply() override {
    if (Status s = host_.sysfs->MakeDir(host_.launch_env_dir); !s.ok())
      return s.Annotate("nccl_env");
    return host_.sysfs->Write(file_, FormatLaunchEnv(env_));
  }

  Status Verify() override {
    auto text = host_.sysfs->Read(file_);
    if (!text.ok()) return text.status().Annotate("nccl_env");
    if (*text != FormatLaunchEnv(env_))
      return FailedPrecondition("nccl_env: " + file_ + " does not hold what was written");
    return Status::Ok();
  }

  Status Revert() override {
    if (file_.empty()) return Status::Ok();
    return host_.sysfs->RemoveFile(file_);
  }

  Status VerifyReverted() override {
    if (!file_.empty() && host_.sysfs->Exists(file_))
      return FailedPrecondition("nccl_env: " + file_ + " is still there");
    return Status::Ok();
  }

  std::string Target() const override { return "nccl_env"; }
  // The node's next workload launches (not the running job: NCCL reads its
  // environment at init).
  std::string ResolvedTarget() const override { return "node"; }
  std::vector<std::string> Mechanism() const override {
    std::string vars;
    for (const auto& [name, value] : env_) vars += (vars.empty() ? "" : " ") + name + "=" + value;
    return {
        "apply: write " + vars +
            " to <TMPDIR>/fdrill-launch-env/nccl_env-*.env (ranks started from now on export it)",
        "revert: remove that file"};
  }

 private:
  Host host_;
  std::map<std::string, std::string> env_;
  std::string file_;
};

bool HcaListChars(const std::string& s) {
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ',' && c != ':' &&
        c != '^' && c != '=' && c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<Fault>> MakeNcclEnv(const Json& params, Host host) {
  ParamReader p(params);
  std::map<std::string, std::string> env;
  const bool has_p2p = p.Has("p2p_disable"), has_nvls = p.Has("nvls_enable"),
             has_hca = p.Has("ib_hca"), has_ch = p.Has("max_channels");
  auto p2p = p.Bool("p2p_disable", false);
  if (!p2p.ok()) return p2p.status();
  if (has_p2p) env["NCCL_P2P_DISABLE"] = *p2p ? "1" : "0";
  auto nvls = p.Bool("nvls_enable", true);
  if (!nvls.ok()) return nvls.status();
  if (has_nvls) env["NCCL_NVLS_ENABLE"] = *nvls ? "1" : "0";
  auto hca = p.String("ib_hca", "");
  if (!hca.ok()) return hca.status();
  if (has_hca) {
    if (hca->empty() || !HcaListChars(*hca)) {
      return InvalidArgument("params.ib_hca: \"" + *hca +
                             "\" is not an NCCL_IB_HCA list like =mlx5_0:1,mlx5_1:1");
    }
    env["NCCL_IB_HCA"] = *hca;
  }
  auto channels = p.Int("max_channels", 0, 1, 64);
  if (!channels.ok()) return channels.status();
  if (has_ch) {
    env["NCCL_MAX_CTAS"] = std::to_string(*channels);
    env["NCCL_MAX_NCHANNELS"] = std::to_string(*channels);  // the name before NCCL 2.17
  }
  if (auto s = p.Finish(); !s.ok()) return s;
  if (env.empty()) {
    return InvalidArgument(
        "params: nccl_env needs at least one of p2p_disable, nvls_enable, ib_hca, max_channels");
  }
  return std::unique_ptr<Fault>(std::make_unique<NcclEnv>(host, std::move(env)));
}

}  // namespace fdrill
