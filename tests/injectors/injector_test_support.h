// What the injector unit tests share: making a fault against the fakes, and
// checks of the contracts every injector keeps (injectors/injector.h):
// params errors name the key; Revert is safe after a failed Apply, without
// an Apply, and twice; a fault an agent journalled and left applied when it
// died is reverted by the fault RestoreFault rebuilds from the journal.
//
// The checks return ::testing::AssertionResult, so a test picks ASSERT_TRUE
// or EXPECT_TRUE and a failure names the step that failed and its Status.
// Nothing here holds state; the fakes stay in the tests.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "injectors/injector.h"

namespace fdrill {

using Argv = std::vector<std::string>;

// The iptables command the netfilter injectors run: iptables -w 5 -t TABLE
// followed by `args`.
Argv Iptables(const Argv& args, const std::string& table = "filter");

// `before`, then how an iptables-chain fault's revert ends: the chain flushed
// and deleted, then nft dropping the table iptables-nft left behind.
std::vector<Argv> ThenChainRemoved(std::vector<Argv> before, const std::string& chain,
                                   const std::string& table = "filter");

// The fault `made` holds. When it holds an error instead, a test failure
// (`what`, then the error) and a stand-in whose every step returns that
// error, so the test fails where it uses the fault instead of crashing.
std::unique_ptr<Fault> FaultOrStandIn(Result<std::unique_ptr<Fault>> made,
                                      const std::string& what = "no fault");
// MakeFault(kind, params, host), which must accept the params; on a refusal,
// as FaultOrStandIn.
std::unique_ptr<Fault> MakeOk(const std::string& kind, const Json& params, Host host);

// What MakeFault(kind, params, host) says of the params: its error, or Ok
// when it accepts them.
Status ParamsError(const std::string& kind, const Json& params, Host host);
// MakeFault refuses `params` with an error that begins "params.<key>:" and
// contains `words`.
::testing::AssertionResult RefusedNaming(const std::string& kind, const Json& params, Host host,
                                         const std::string& key, const std::string& words = "");

// `s` is an error whose message begins with `prefix`.
::testing::AssertionResult ErrorStartsWith(const Status& s, const std::string& prefix);
// ... and whose code is `code`.
::testing::AssertionResult ErrorStartsWith(const Status& s, StatusCode code,
                                           const std::string& prefix);
// `s` is an error whose message contains `words`.
::testing::AssertionResult ErrorContains(const Status& s, const std::string& words);
// ... and whose code is `code`.
::testing::AssertionResult ErrorContains(const Status& s, StatusCode code,
                                         const std::string& words);

// Capture() then Apply(), each Ok.
::testing::AssertionResult CapturedAndApplied(Fault& fault);
// Apply() then Verify(), each Ok: the fault is in force.
::testing::AssertionResult AppliedAndVerified(Fault& fault);
// Revert() then VerifyReverted(), each Ok.
::testing::AssertionResult Reverted(Fault& fault);

// On a fault not yet captured, on a fake nothing has changed yet: Capture and
// a Revert before Apply change nothing; Apply, then Revert; a second Revert
// changes nothing more; VerifyReverted is Ok. `changes` counts the
// machine-changing calls the fake has seen.
::testing::AssertionResult RevertIsSafeUnappliedAndTwice(Fault& fault,
                                                         const std::function<size_t()>& changes);
// ... counted by the fake's Mutations() (FakeNetKernel, FakeIptables,
// FakeIbFabric, FakeNvml).
template <typename Fake>
::testing::AssertionResult RevertIsSafeUnappliedAndTwice(Fault& fault, const Fake& fake) {
  return RevertIsSafeUnappliedAndTwice(
      fault, std::function<size_t()>([&fake] { return fake.Mutations().size(); }));
}

// Plays an agent that dies with `fault` applied: Capture, the journal record
// the agent writes before Apply ({kind, params, saved: Saved()}), Apply, and
// `fault` destroyed. Returns the record; a failed step records a test
// failure. `fault` must have been made from `kind` and `params`.
Json JournalApplyAndDie(const std::string& kind, const Json& params, std::unique_ptr<Fault> fault);
// ... with the fault MakeOk(kind, params, host) makes.
Json JournalApplyAndDie(const std::string& kind, const Json& params, Host host);
// The fault a restarted agent rebuilds from a journal record (RestoreFault);
// when that fails, as FaultOrStandIn.
std::unique_ptr<Fault> Restore(const Json& record, Host host);

}  // namespace fdrill
