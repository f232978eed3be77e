#include "tests/injectors/injector_test_support.h"

#include <optional>
#include <utility>

namespace fdrill {
namespace {

using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;

// Stands in for a fault that could not be made: every step returns why.
class RefusedFault final : public Fault {
 public:
  explicit RefusedFault(Status why) : why_(std::move(why)) {}
  Status Capture() override { return why_; }
  Json Saved() const override { return Json(); }
  Status Load(const Json&) override { return why_; }
  Status Apply() override { return why_; }
  Status Verify() override { return why_; }
  Status Tick(Duration) override { return why_; }
  Status Revert() override { return why_; }
  Status VerifyReverted() override { return why_; }
  std::string Target() const override { return "(refused: " + why_.ToString() + ")"; }
  std::vector<std::string> Mechanism() const override { return {}; }

 private:
  Status why_;
};

// Success when the step returned Ok; otherwise names the step and its Status.
AssertionResult StepOk(const char* step, const Status& s) {
  if (s.ok()) return AssertionSuccess();
  return AssertionFailure() << step << ": " << s.ToString();
}

// Success when `s` is an error, with `code` when one is given, whose message
// begins with `words` (at_start) or contains them.
AssertionResult ErrorWith(const Status& s, std::optional<StatusCode> code, const std::string& words,
                          bool at_start) {
  const char* where = at_start ? "begin with" : "contain";
  if (s.ok()) return AssertionFailure() << "Ok, not an error";
  if (code && s.code() != *code) {
    return AssertionFailure() << s.ToString() << " is not " << StatusCodeName(*code);
  }
  size_t at = s.message().find(words);
  if (at_start ? at != 0 : at == std::string::npos) {
    return AssertionFailure() << s.ToString() << " does not " << where << " \"" << words << "\"";
  }
  return AssertionSuccess();
}

}  // namespace

Argv Iptables(const Argv& args, const std::string& table) {
  Argv argv = {"iptables", "-w", "5", "-t", table};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<Argv> ThenChainRemoved(std::vector<Argv> before, const std::string& chain,
                                   const std::string& table) {
  before.push_back(Iptables({"-F", chain}, table));
  before.push_back(Iptables({"-X", chain}, table));
  before.push_back({"nft", "delete", "table", "ip", table});
  return before;
}

std::unique_ptr<Fault> FaultOrStandIn(Result<std::unique_ptr<Fault>> made,
                                      const std::string& what) {
  if (made.ok()) return std::move(*made);
  ADD_FAILURE() << what << ": " << made.status().ToString();
  return std::make_unique<RefusedFault>(made.status());
}

std::unique_ptr<Fault> MakeOk(const std::string& kind, const Json& params, Host host) {
  return FaultOrStandIn(MakeFault(kind, params, host), kind + " with params " + params.dump());
}

Status ParamsError(const std::string& kind, const Json& params, Host host) {
  return MakeFault(kind, params, host).status();
}

AssertionResult RefusedNaming(const std::string& kind, const Json& params, Host host,
                              const std::string& key, const std::string& words) {
  Status s = ParamsError(kind, params, host);
  AssertionResult r = ErrorStartsWith(s, "params." + key + ":");
  if (r) r = ErrorContains(s, words);
  if (!r) r << " (" << kind << " with params " << params.dump() << ")";
  return r;
}

AssertionResult ErrorStartsWith(const Status& s, const std::string& prefix) {
  return ErrorWith(s, std::nullopt, prefix, /*at_start=*/true);
}

AssertionResult ErrorStartsWith(const Status& s, StatusCode code, const std::string& prefix) {
  return ErrorWith(s, code, prefix, /*at_start=*/true);
}

AssertionResult ErrorContains(const Status& s, const std::string& words) {
  return ErrorWith(s, std::nullopt, words, /*at_start=*/false);
}

AssertionResult ErrorContains(const Status& s, StatusCode code, const std::string& words) {
  return ErrorWith(s, code, words, /*at_start=*/false);
}

AssertionResult CapturedAndApplied(Fault& fault) {
  if (auto r = StepOk("Capture", fault.Capture()); !r) return r;
  return StepOk("Apply", fault.Apply());
}

AssertionResult AppliedAndVerified(Fault& fault) {
  if (auto r = StepOk("Apply", fault.Apply()); !r) return r;
  return StepOk("Verify", fault.Verify());
}

AssertionResult Reverted(Fault& fault) {
  if (auto r = StepOk("Revert", fault.Revert()); !r) return r;
  return StepOk("VerifyReverted", fault.VerifyReverted());
}

AssertionResult RevertIsSafeUnappliedAndTwice(Fault& fault,
                                              const std::function<size_t()>& changes) {
  if (auto r = StepOk("Capture", fault.Capture()); !r) return r;
  if (auto r = StepOk("Revert before Apply", fault.Revert()); !r) return r;
  if (changes() != 0) {
    return AssertionFailure() << changes() << " changes before Apply (Capture and Revert)";
  }
  if (auto r = StepOk("Apply", fault.Apply()); !r) return r;
  if (auto r = StepOk("Revert", fault.Revert()); !r) return r;
  size_t after_first = changes();
  if (auto r = StepOk("second Revert", fault.Revert()); !r) return r;
  if (changes() != after_first) {
    return AssertionFailure() << "the second Revert changed the machine (" << after_first
                              << " changes, then " << changes() << ")";
  }
  return StepOk("VerifyReverted", fault.VerifyReverted());
}

Json JournalApplyAndDie(const std::string& kind, const Json& params, std::unique_ptr<Fault> fault) {
  Json record = {{"kind", kind}, {"params", params}};
  if (auto r = StepOk("Capture", fault->Capture()); !r) {
    ADD_FAILURE() << r.message();
    return record;
  }
  record["saved"] = fault->Saved();  // journalled (fsync) before Apply
  EXPECT_TRUE(StepOk("Apply", fault->Apply()));
  fault.reset();  // the agent died
  return record;
}

Json JournalApplyAndDie(const std::string& kind, const Json& params, Host host) {
  return JournalApplyAndDie(kind, params, MakeOk(kind, params, host));
}

std::unique_ptr<Fault> Restore(const Json& record, Host host) {
  return FaultOrStandIn(RestoreFault(record, host), "RestoreFault(" + record.dump() + ")");
}

}  // namespace fdrill
