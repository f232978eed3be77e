#include "injectors/egress_loss.h"

#include "common/core/json.h"
#include "injectors/netdev.h"
#include "injectors/nft_table.h"
#include "injectors/param_values.h"

namespace fdrill {

namespace {

constexpr char kFamily[] = "netdev";
constexpr char kChain[] = "egress";

using Argv = std::vector<std::string>;

class EgressLoss final : public Fault {
 public:
  EgressLoss(Host host, EgressLossSpec spec) : host_(host), spec_(std::move(spec)) {}

  Status Capture() override {
    NetOf net(host_);
    auto link = ReadLink(*net, spec_.ifname);  // NotFound listing what exists
    if (!link.ok()) return link.status().Annotate(Who());
    auto table = TableExists();
    if (!table.ok()) return table.status();
    if (*table) {
      return FailedPrecondition(Who() + ": nft table " + std::string(kFamily) + " " + Table() +
                                " already exists; run `fdrill-agent --revert-all` if a drill "
                                "left it");
    }
    auto hole = HoleExists();
    if (!hole.ok()) return hole.status();
    if (*hole) {
      return FailedPrecondition(Who() + ": interface " + Hole() +
                                " already exists; run `fdrill-agent --revert-all` if a drill "
                                "left it");
    }
    return Status::Ok();
  }

  Json Saved() const override { return Json::object(); }
  Status Load(const Json&) override { return Status::Ok(); }

  Status Apply() override { return RunEachChecked(*host_.runner, ApplySteps(), Who()); }

  Status Verify() override {
    auto hole = HoleExists();
    if (!hole.ok()) return hole.status();
    if (!*hole) return FailedPrecondition(Who() + ": interface " + Hole() + " is not there");
    auto listed = RunChecked(*host_.runner, {"nft", "-j", "list", "table", kFamily, Table()});
    if (!listed.ok()) return listed.status().Annotate(Who());
    Json j = ParseOutsideJson(*listed);
    bool hooked = false;
    for (const auto& item : j.value("nftables", Json::array())) {
      if (item.contains("chain") && item["chain"].value("name", "") == kChain &&
          item["chain"].value("hook", "") == "egress") {
        hooked = true;
      }
      if (!item.contains("rule") || item["rule"].value("chain", "") != kChain) continue;
      bool peer = !spec_.peer, share = spec_.micro_percent >= kNftWhole, fwd = false;
      for (const auto& e : item["rule"].value("expr", Json::array())) {
        if (e.contains("fwd") && e["fwd"].value("dev", "") == Hole()) fwd = true;
        if (!e.contains("match")) continue;
        const Json& m = e["match"];
        const Json& left = m.value("left", Json::object());
        if (spec_.peer && left.contains("payload") &&
            left["payload"].value("field", "") == "daddr" && PeerIs(m.value("right", Json()))) {
          peer = true;
        }
        if (IsNftShare(m, spec_.micro_percent)) share = true;
      }
      if (hooked && peer && share && fwd) return Status::Ok();
    }
    return FailedPrecondition(Who() + ": table " + std::string(kFamily) + " " + Table() +
                              " holds no egress rule sending " +
                              FormatPercent(spec_.micro_percent) + " of " + spec_.ifname +
                              "'s packets to " + Hole());
  }

  Status Revert() override {
    auto table = TableExists();
    if (!table.ok()) return table.status();
    if (*table) {
      auto r = RunChecked(*host_.runner, DeleteTableArgv());
      if (!r.ok()) return r.status().Annotate(Who());
    }
    auto hole = HoleExists();
    if (!hole.ok()) return hole.status();
    if (*hole) {
      auto r = RunChecked(*host_.runner, DeleteHoleArgv());
      if (!r.ok()) return r.status().Annotate(Who());
    }
    return Status::Ok();
  }

  Status VerifyReverted() override {
    auto table = TableExists();
    if (!table.ok()) return table.status();
    if (*table) return FailedPrecondition(Who() + ": table netdev " + Table() + " is still there");
    auto hole = HoleExists();
    if (!hole.ok()) return hole.status();
    if (*hole) return FailedPrecondition(Who() + ": interface " + Hole() + " is still there");
    return Status::Ok();
  }

  std::string Target() const override { return spec_.ifname; }
  std::vector<std::string> Mechanism() const override {
    std::vector<std::string> out;
    for (const auto& argv : ApplySteps()) out.push_back("apply: " + JoinArgv(argv));
    out.push_back("revert: " + JoinArgv(DeleteTableArgv()));
    out.push_back("revert: " + JoinArgv(DeleteHoleArgv()));
    return out;
  }

 private:
  std::string Who() const { return "link_loss " + spec_.ifname; }
  std::string Table() const { return "fdrill_loss_" + spec_.hash; }
  std::string Hole() const { return "fdrill" + spec_.hash; }

  std::vector<Argv> ApplySteps() const {
    Argv rule = {"nft", "add", "rule", kFamily, Table(), kChain};
    if (spec_.peer) {
      for (const char* a : {"ip", "daddr"}) rule.push_back(a);
      rule.push_back(*spec_.peer);
    }
    AppendNftShare(rule, spec_.micro_percent);
    for (const char* a : {"counter", "fwd", "to"}) rule.push_back(a);
    rule.push_back(Hole());
    return {
        {"ip", "link", "add", Hole(), "type", "veth", "peer", "name", Hole() + "p"},
        {"ip", "link", "set", "dev", Hole(), "up"},
        {"nft", "add", "table", kFamily, Table()},
        {"nft", "add", "chain", kFamily, Table(), kChain,
         "{ type filter hook egress device \"" + spec_.ifname +
             "\" priority 0 ; policy accept ; }"},
        rule,
    };
  }
  Argv DeleteTableArgv() const { return {"nft", "delete", "table", kFamily, Table()}; }
  Argv DeleteHoleArgv() const { return {"ip", "link", "del", Hole()}; }

  // nft -j prints a single address as a string, a prefix as {"prefix": {addr, len}}.
  bool PeerIs(const Json& right) const {
    if (right.is_string()) return right.get<std::string>() == *spec_.peer;
    if (!right.is_object() || !right.contains("prefix")) return false;
    const Json& p = right["prefix"];
    return p.value("addr", "") + "/" + std::to_string(p.value("len", -1)) == *spec_.peer;
  }

  Result<bool> TableExists() const {
    return NftTableExists(*host_.runner, kFamily, Table(), Who());
  }

  Result<bool> HoleExists() const {
    NetOf net(host_);
    auto links = ListLinks(*net);
    if (!links.ok()) return links.status().Annotate(Who());
    for (const auto& l : *links)
      if (l.name == Hole()) return true;
    return false;
  }

  Host host_;
  EgressLossSpec spec_;
};

}  // namespace

std::unique_ptr<Fault> MakeEgressLoss(Host host, EgressLossSpec spec) {
  return std::make_unique<EgressLoss>(host, std::move(spec));
}

}  // namespace fdrill
