// IptablesChain: a netfilter fault's own iptables chain, shared by the
// iptables-based injectors (link_loss, link_partition, link_delay's nfqueue
// mode). ChainFault (below) is the whole Fault of an injector whose chain is
// all it changes.
//
// Each fault puts its rules in a chain of its own, FDRILL-<TAG>-<8 hex>, the
// hex a hash of the fault's kind and params (so a journal replay finds the
// same chain), reached from built-in chains by jump rules tagged
// `-m comment --comment fdrill:<kind>`. Undo deletes whole objects: the
// jumps, then the chain; `iptables-save | grep FDRILL` shows any residue.
//
//   Capture()  refuses a chain that already exists (left by a crashed drill,
//              or an identical fault active now: `fdrill-agent --revert-all`),
//              and records whether the table existed: the nf_tables backend
//              creates a table (with its base chains) on first use and keeps
//              it, so Revert deletes a table it created once it is empty.
//   Apply()    -N chain, -A its rules, then -I the jumps at position 1: the
//              fault takes effect with the last jump, complete.
//   Verify()   `-C` for every rule in the chain and every jump: the kernel's
//              ruleset, not our intent.
//   Revert()   deletes the jumps that exist, flushes and deletes the chain if
//              it exists; safe after a partial Apply and safe twice.
// Argv only: `iptables -w 5 -t TABLE ...` (IPv4). Not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/core/json.h"
#include "common/core/result.h"
#include "common/host/host.h"
#include "injectors/injector.h"

namespace fdrill {

using Argv = std::vector<std::string>;

struct ChainSpec {
  std::string table;        // "filter" or "raw"
  std::string name;         // FDRILL-LOSS-1a2b3c4d (iptables allows 28 chars)
  std::string comment;      // "fdrill:link_loss", on each jump rule
  std::vector<Argv> hooks;  // {"OUTPUT", "-o", "fab0"}: built-in chain, then match
  std::vector<Argv> rules;  // rule specs inside the chain: {"-d", "198.18.0.2", "-j", "DROP"}
};

// FDRILL-<tag>-<fnv1a32(kind + params) as 8 hex digits>.
std::string FaultChainName(const std::string& tag, const std::string& kind, const Json& params);

class IptablesChain {
 public:
  IptablesChain(ProcessRunner* runner, ChainSpec spec, std::string who)
      : runner_(runner), spec_(std::move(spec)), who_(std::move(who)) {}

  Status Capture();
  Json Saved() const {
    return {{"chain", spec_.name}, {"table_existed", table_existed_}, {"nft", nft_}};
  }
  void Load(const Json& saved);
  Status Apply();
  Status Verify();
  Status Revert();
  Status VerifyReverted();
  std::vector<std::string> Mechanism() const;
  const ChainSpec& spec() const { return spec_; }

 private:
  Argv Ipt(std::vector<std::string> args) const;
  Argv JumpSpec(const Argv& hook) const;  // hook + comment + -j chain
  // 0: present, 1: absent; other exit codes are errors.
  Result<bool> Check(const std::string& chain, const Argv& spec);
  Result<bool> ChainExists();
  // The lines of `iptables-save` for our table; empty when the table does
  // not exist (only whole-ruleset iptables-save tells: `-t` invents it).
  Result<std::vector<std::string>> SavedTable();

  ProcessRunner* runner_;
  ChainSpec spec_;
  std::string who_;  // "link_loss fab0", for messages
  bool table_existed_ = true;
  bool nft_ = false;
};

// A fault that is one IptablesChain and nothing else (link_loss,
// link_partition): Capture checks that the interface exists, when the fault
// names one (NotFound prefixed by `kind`), then captures the chain; every
// other step is the chain's. Messages start "<kind> <target>: ".
class ChainFault final : public Fault {
 public:
  // `ifname` "" acts on every interface; `target` is what Target() returns.
  ChainFault(Host host, std::string kind, std::string ifname, std::string target, ChainSpec spec)
      : host_(host),
        kind_(std::move(kind)),
        ifname_(std::move(ifname)),
        target_(std::move(target)),
        chain_(host.runner, std::move(spec), kind_ + " " + target_) {}

  Status Capture() override;
  Json Saved() const override { return chain_.Saved(); }
  Status Load(const Json& saved) override {
    chain_.Load(saved);
    return Status::Ok();
  }
  Status Apply() override { return chain_.Apply(); }
  Status Verify() override { return chain_.Verify(); }
  Status Revert() override { return chain_.Revert(); }
  Status VerifyReverted() override { return chain_.VerifyReverted(); }
  std::string Target() const override { return target_; }
  std::vector<std::string> Mechanism() const override { return chain_.Mechanism(); }

 private:
  Host host_;
  std::string kind_;    // "link_loss"
  std::string ifname_;  // "": every interface
  std::string target_;
  IptablesChain chain_;
};

// Ok when `iptables` runs; Unsupported naming what is missing.
Status ProbeIptables(ProcessRunner& runner, const std::string& who);
// ProbeIptables, then that params.interface (when given) exists: the probe
// of the ChainFault injectors.
Status ProbeChainFault(const Json& params, Host host, const std::string& kind);

}  // namespace fdrill
