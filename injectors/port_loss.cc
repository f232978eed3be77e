// port_loss: drops a random share of the frames a switch forwards out of one
// of its ports — loss on an emulated switch port or uplink. Run by that
// switch's agent.
//
// Why not link_loss: iptables' OUTPUT and PREROUTING see a host's own
// traffic; a frame a bridge forwards meets them only through br_netfilter,
// with the bridge (br0), not the port, as its interface. The bridge family
// of nftables hooks the forwarding itself, per egress port.
// Mechanism: a table of the fault's own, `bridge fdrill_loss_<port>`, with
// one base chain `forward` (type filter hook forward priority 0, policy
// accept) holding one rule:
//   oifname PORT numgen random mod 100000000 lt P counter drop
// (P = percent in millionths of a percent, so 1.5 % drops exactly 1.5 %; a
// plain `oifname PORT counter drop` at 100 %). Capture checks the port is a
// bridge port and that the table does not exist yet. Verify reads the
// ruleset back (`nft -j list table`): the oifname match, the numgen bound
// and the drop. Revert deletes the table while it exists, so it is safe
// after a failed Apply and safe twice. The agent's snapshot lists fdrill's
// nft tables, so one left behind is residue.
// GSO caveat as link_loss's: a veth hands the bridge super-packets of up to
// 64 KB, so the share is of forwarded skbs, not of wire packets.
#include "common/core/json.h"
#include "injectors/injector.h"
#include "injectors/netdev.h"
#include "injectors/nft_table.h"
#include "injectors/param_values.h"
#include "injectors/params.h"

namespace fdrill {

namespace {

constexpr char kChain[] = "forward";

class PortLoss final : public Fault {
 public:
  PortLoss(Host host, std::string port, uint64_t micro_percent)
      : host_(host), port_(std::move(port)), micro_percent_(micro_percent) {}

  Status Capture() override {
    NetOf net(host_);
    auto link = ReadLink(*net, port_);  // NotFound listing what exists
    if (!link.ok()) return link.status();
    if (link->master.empty()) {
      return FailedPrecondition(Who() + ": " + port_ +
                                " is on no bridge; port_loss is for a switch's ports (on a node's "
                                "interface use link_loss)");
    }
    auto exists = TableExists();
    if (!exists.ok()) return exists.status();
    if (*exists) {
      return FailedPrecondition(Who() + ": nft table bridge " + Table() +
                                " already exists; run `fdrill-agent --revert-all` if a drill left "
                                "it");
    }
    return Status::Ok();
  }

  Json Saved() const override { return Json::object(); }
  Status Load(const Json&) override { return Status::Ok(); }

  Status Apply() override { return RunEachChecked(*host_.runner, ApplySteps(), Who()); }

  Status Verify() override {
    auto listed = RunChecked(*host_.runner, {"nft", "-j", "list", "table", "bridge", Table()});
    if (!listed.ok()) return listed.status().Annotate(Who());
    Json j = ParseOutsideJson(*listed);
    for (const auto& item : j.value("nftables", Json::array())) {
      if (!item.contains("rule")) continue;
      const Json& rule = item["rule"];
      bool port = false, share = micro_percent_ >= kNftWhole, drop = false;
      for (const auto& e : rule.value("expr", Json::array())) {
        if (e.contains("drop")) drop = true;
        if (!e.contains("match")) continue;
        const Json& m = e["match"];
        const Json& left = m.value("left", Json::object());
        if (left.contains("meta") && left["meta"].value("key", "") == "oifname" &&
            m.value("right", Json()) == port_) {
          port = true;
        }
        if (IsNftShare(m, micro_percent_)) share = true;
      }
      if (rule.value("chain", "") == kChain && port && share && drop) return Status::Ok();
    }
    return FailedPrecondition(Who() + ": table bridge " + Table() + " holds no rule dropping " +
                              FormatPercent(micro_percent_) + " out of " + port_);
  }

  Status Revert() override {
    auto exists = TableExists();
    if (!exists.ok()) return exists.status();
    if (!*exists) return Status::Ok();  // never applied, or already reverted
    auto r = RunChecked(*host_.runner, DeleteArgv());
    return r.ok() ? Status::Ok() : r.status().Annotate(Who());
  }

  Status VerifyReverted() override {
    auto exists = TableExists();
    if (!exists.ok()) return exists.status();
    return *exists ? FailedPrecondition(Who() + ": table bridge " + Table() + " is still there")
                   : Status::Ok();
  }

  std::string Target() const override { return port_; }
  std::vector<std::string> Mechanism() const override {
    std::vector<std::string> out;
    for (const auto& argv : ApplySteps()) out.push_back("apply: " + JoinArgv(argv));
    out.push_back("revert: " + JoinArgv(DeleteArgv()));
    return out;
  }

 private:
  std::string Who() const { return "port_loss " + port_; }
  std::string Table() const { return "fdrill_loss_" + port_; }

  std::vector<std::vector<std::string>> ApplySteps() const {
    std::vector<std::string> rule = {"nft",   "add",  "rule",    "bridge",
                                     Table(), kChain, "oifname", port_};
    AppendNftShare(rule, micro_percent_);
    rule.push_back("counter");
    rule.push_back("drop");
    return {{"nft", "add", "table", "bridge", Table()},
            {"nft", "add", "chain", "bridge", Table(), kChain,
             "{ type filter hook forward priority 0 ; policy accept ; }"},
            rule};
  }
  std::vector<std::string> DeleteArgv() const {
    return {"nft", "delete", "table", "bridge", Table()};
  }

  Result<bool> TableExists() const {
    return NftTableExists(*host_.runner, "bridge", Table(), Who());
  }

  Host host_;
  std::string port_;
  uint64_t micro_percent_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakePortLoss(const Json& params, Host host) {
  ParamReader p(params);
  auto port = p.String("interface");
  if (!port.ok()) return port.status();
  auto percent = ReadPercent(p, params, "percent");
  if (!percent.ok()) return percent.status();
  if (auto s = p.Finish(); !s.ok()) return s;
  for (char c : *port) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return InvalidArgument("params.interface: \"" + *port +
                             "\" must be letters, digits and _ (a switch port like up0)");
  }
  return std::unique_ptr<Fault>(std::make_unique<PortLoss>(host, *port, *percent));
}

}  // namespace fdrill
