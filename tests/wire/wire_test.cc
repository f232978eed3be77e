#include "harness/wire/wire.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

TEST(Wire, RoundTripsWholeAndByteByByte) {
  Json req = MakeRequest("apply", 42, {{"kind", "link_rate"}, {"params", {{"rate", "100mbit"}}}});
  std::string frame = EncodeFrame(req) + EncodeFrame(MakeReply(42, {{"verified", true}}));
  FrameDecoder whole;
  whole.Feed(frame);
  auto a = whole.Next();
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((**a)["type"], "apply");
  EXPECT_EQ((**a)["id"], 42);
  EXPECT_EQ((**a)["params"]["rate"], "100mbit");
  auto b = whole.Next();
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_TRUE((**b)["ok"].get<bool>());
  EXPECT_FALSE(whole.Next()->has_value());

  FrameDecoder drip;
  int messages = 0;
  for (char c : frame) {
    drip.Feed(std::string_view(&c, 1));
    auto m = drip.Next();
    ASSERT_TRUE(m.ok());
    if (m->has_value()) ++messages;
  }
  EXPECT_EQ(messages, 2);
}

TEST(Wire, ADecoderThatHasReadEverythingHoldsNoBuffer) {
  FrameDecoder d;
  for (int i = 0; i < 50; ++i) {
    d.Feed(EncodeFrame(MakeReply(i, {{"pad", std::string(3000, 'x')}})));
    auto m = d.Next();
    ASSERT_TRUE(m.ok() && m->has_value());
    EXPECT_EQ((**m)["id"], i);
  }
  EXPECT_LE(d.held_bytes(), 512u);
  // Half a frame is kept until the rest comes.
  std::string frame = EncodeFrame(MakeReply(7, {{"pad", std::string(100000, 'y')}}));
  d.Feed(std::string_view(frame).substr(0, 50000));
  EXPECT_FALSE(d.Next()->has_value());
  EXPECT_GE(d.held_bytes(), 50000u);
  d.Feed(std::string_view(frame).substr(50000));
  auto m = d.Next();
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((**m)["pad"].get<std::string>().size(), 100000u);
  EXPECT_LE(d.held_bytes(), 512u);
}

TEST(Wire, RefusesOversizeGarbageAndOtherVersions) {
  FrameDecoder small(16);
  small.Feed(EncodeFrame(MakeRequest("hello", 1, {{"pad", std::string(64, 'x')}})));
  EXPECT_EQ(small.Next().status().code(), StatusCode::kInvalidArgument);

  FrameDecoder garbage;
  garbage.Feed(std::string("\0\0\0\x05hello", 9));
  EXPECT_FALSE(garbage.Next().ok());

  FrameDecoder other;
  Json v2 = MakeRequest("hello", 1);
  v2["v"] = 2;
  other.Feed(EncodeFrame(v2));
  auto r = other.Next();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("version"), std::string::npos);

  FrameDecoder zero;
  zero.Feed(std::string("\0\0\0\0", 4));
  EXPECT_FALSE(zero.Next().ok());
}

TEST(Wire, ErrorRepliesCarryCodeAndMessage) {
  Json reply = MakeErrorReply(7, NotFound("no interface fab9"));
  auto r = ReplyToResult(reply);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "no interface fab9");
  EXPECT_TRUE(ReplyToResult(MakeReply(7)).ok());
}

}  // namespace
}  // namespace fdrill
