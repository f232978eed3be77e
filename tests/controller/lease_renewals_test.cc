// LeaseRenewals (harness/controller/lease_renewals.h): what answers a
// renewal, when one has failed, and what the lease thread forgets.
#include "harness/controller/lease_renewals.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::TimePoint kT0{std::chrono::hours(1)};

// One agent renewed every second (the lease thread's turns), as DrillAgents
// does: take the turn, send, note the call's id.
struct Agent {
  LeaseRenewals r{1, kT0};
  Clock::TimePoint now = kT0;
  LeaseRenewals::Turn Turn() {
    now += seconds(1);
    return r.TakeTurn(0, "1s");
  }
  uint64_t Send(uint64_t call_id) {
    const uint64_t seq = r.Sent(0, now);
    r.CallId(0, seq, call_id);
    return seq;
  }
};

TEST(LeaseRenewals, RenewalsAcknowledgedByPushHoldFromWhenEachWasSent) {
  Agent a;
  for (uint64_t k = 1; k <= 5; ++k) {
    const LeaseRenewals::Turn t = a.Turn();
    EXPECT_EQ(t.failed, "") << k;
    // The renewal before last is forgotten: its pending call never gets a
    // reply from an agent that acknowledges by push.
    EXPECT_EQ(t.forget, k >= 3 ? 100 + k - 2 : 0) << k;
    const uint64_t seq = a.Send(100 + k);
    EXPECT_EQ(seq, k);
    // Acknowledged 900 ms on, in the agent's counters push: the lease is
    // good from the renewal's send, not from the push.
    EXPECT_EQ(a.r.Acked(0, seq), a.now) << k;  // when it went, for the ack's delay
    EXPECT_EQ(a.r.TakeTurn(0, "1s").last_ok, a.now) << k;
  }
}

TEST(LeaseRenewals, ARenewalUnansweredTwoTurnsOnHasFailedUntilALaterOneIsAnswered) {
  Agent a;
  a.Turn();
  a.Send(11);  // 1: acknowledged one turn late, still in time
  a.Turn();
  a.Send(12);  // 2
  a.r.Acked(0, 1);
  EXPECT_EQ(a.Turn().failed, "");
  a.Send(13);  // 3
  // 2 went two turns ago and nothing answered it.
  LeaseRenewals::Turn t = a.Turn();
  EXPECT_EQ(t.failed, "no answer within two renewals (1s each)");
  EXPECT_EQ(t.forget, 12u);
  EXPECT_EQ(t.last_ok, kT0 + seconds(1));  // when 1 went
  a.Send(14);                              // 4
  a.r.Acked(0, 4);                         // covers 3 as well
  t = a.Turn();
  EXPECT_EQ(t.failed, "");
  EXPECT_EQ(t.last_ok, kT0 + seconds(4));
}

// On a loaded machine acknowledgements ran 2 s late at the p99: each came
// after its renewal was given up on. The lease still held from when each
// went, and a controller that ignored them saw every lease go stale (7,612
// leases "lost" in one fanout_bench run at 10,000 agents, every agent
// holding its lease): a late answer still counts for the lease's time.
TEST(LeaseRenewals, AnAnswerAfterItsRenewalWasGivenUpOnStillShowsTheLeaseHeld) {
  Agent a;
  for (uint64_t k = 1; k <= 10; ++k) {
    const LeaseRenewals::Turn t = a.Turn();
    if (k >= 4) {
      // Renewal k - 2 was given up on at this turn; k - 3's late ack came.
      EXPECT_EQ(t.failed, "no answer within two renewals (1s each)") << k;
      EXPECT_EQ(t.last_ok, kT0 + seconds(k - 3)) << k;
    }
    a.Send(100 + k);
    if (k >= 3) {
      EXPECT_TRUE(a.r.Acked(0, k - 2).has_value()) << k;  // 2.x s after it went
    }
  }
  // Answers to renewals long gone (no send time kept), or never sent.
  EXPECT_FALSE(a.r.Acked(0, 10 - LeaseRenewals::kRemembered).has_value());
  EXPECT_FALSE(a.r.Acked(0, 11).has_value());
  EXPECT_FALSE(a.r.Acked(0, 0).has_value());
  EXPECT_TRUE(a.r.Acked(0, 10).has_value());
  EXPECT_EQ(a.Turn().failed, "");
}

TEST(LeaseRenewals, RepliesAnswerAnAgentThatDoesNotAcknowledgeByPushAndCarryRefusals) {
  Agent a;
  a.Turn();
  const uint64_t one = a.Send(21);
  a.r.Replied(0, one, Json::object());
  LeaseRenewals::Turn t = a.Turn();
  EXPECT_EQ(t.failed, "");
  EXPECT_EQ(t.last_ok, kT0 + seconds(1));  // when it went: the agent took it after
  const uint64_t two = a.Send(22);
  a.r.Replied(0, two, Status(StatusCode::kFailedPrecondition, "lease held by another drill"));
  EXPECT_EQ(a.Turn().failed, "lease held by another drill");
  // An answer to an earlier renewal does not hide a later refusal.
  a.r.Replied(0, one, Json::object());
  a.r.Replied(0, one, Status(StatusCode::kUnavailable, "late"));
  EXPECT_EQ(a.r.TakeTurn(0, "1s").failed, "lease held by another drill");
}

TEST(LeaseRenewals, AnAcknowledgementOfARenewalNeverSentIsIgnored) {
  Agent a;
  a.Turn();
  a.Send(31);
  EXPECT_FALSE(a.r.Acked(0, 7).has_value());  // another controller's number, or a restarted agent's
  a.Turn();
  a.Send(32);
  EXPECT_EQ(a.Turn().failed, "no answer within two renewals (1s each)");
}

// Pushes go to every session an agent has: a push acknowledges a renewal
// (an unsigned number, as a push parses) only for the drill it names.
TEST(LeaseRenewals, APushAcknowledgesOnlyItsOwnDrillsRenewal) {
  EXPECT_EQ(LeaseRenewals::AckIn({{"type", "counters"}, {"lease_ack", 3u}, {"drill", "d1"}}, "d1"),
            3u);
  EXPECT_EQ(LeaseRenewals::AckIn({{"type", "lease_ack"}, {"lease_ack", 4u}, {"drill", ""}}, ""),
            4u);
  EXPECT_FALSE(LeaseRenewals::AckIn({{"lease_ack", 3u}, {"drill", "d2"}}, "d1"));
  EXPECT_FALSE(LeaseRenewals::AckIn({{"lease_ack", 3u}}, "d1"));
  EXPECT_FALSE(LeaseRenewals::AckIn({{"lease_ack", -3}, {"drill", "d1"}}, "d1"));
  EXPECT_FALSE(LeaseRenewals::AckIn({{"type", "counters"}, {"drill", "d1"}}, "d1"));
}

TEST(LeaseRenewals, ALeaseIsLostOnlyWhenARenewalFailedAndItMayLapseBeforeTheNext) {
  const LeaseRenewals::Turn held{.failed = "", .last_ok = kT0};
  const LeaseRenewals::Turn failed{.failed = "no answer", .last_ok = kT0};
  EXPECT_FALSE(held.Lost(kT0 + seconds(10), seconds(1), seconds(5)));
  EXPECT_FALSE(failed.Lost(kT0 + milliseconds(3999), seconds(1), seconds(5)));
  EXPECT_TRUE(failed.Lost(kT0 + seconds(4), seconds(1), seconds(5)));
}

TEST(LeaseRenewals, RestartMakesEveryLeaseGoodFromThen) {
  LeaseRenewals r(3, kT0);
  r.Restart(kT0 + seconds(30));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r.TakeTurn(i, "1s").last_ok, kT0 + seconds(30));
}

}  // namespace
}  // namespace fdrill
