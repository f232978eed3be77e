#include "common/wire/wire.h"

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

// Issue 48: a frame nested 100,000 deep crashed the agent (a stack
// overflow in its audit writer) before any role check. The decoder refuses
// anything past kMaxFrameDepth by its bytes, before the parser sees it.
TEST(Wire, RefusesAFrameNestedPastTheDepthLimitBeforeParsingIt) {
  auto frame_of = [](const std::string& body) {
    std::string f(4, '\0');
    const uint32_t n = static_cast<uint32_t>(body.size());
    f[0] = static_cast<char>(n >> 24);
    f[1] = static_cast<char>(n >> 16);
    f[2] = static_cast<char>(n >> 8);
    f[3] = static_cast<char>(n);
    return f + body;
  };
  auto nested = [](int depth) {
    return std::string("{\"v\":1,\"type\":\"hello\",\"id\":1,\"x\":") +
           std::string(static_cast<size_t>(depth), '[') +
           std::string(static_cast<size_t>(depth), ']') + "}";
  };
  FrameDecoder deep;
  deep.Feed(frame_of(nested(100000)));
  auto refused = deep.Next();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("deeper than 64"), std::string::npos)
      << refused.status().message();
  // At the limit (the message object is one level): read as usual.
  FrameDecoder ok;
  ok.Feed(frame_of(nested(kMaxFrameDepth - 1)));
  auto read = ok.Next();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(read->has_value());
  FrameDecoder over;
  over.Feed(frame_of(nested(kMaxFrameDepth)));
  EXPECT_FALSE(over.Next().ok());
}

TEST(Wire, DepthIsCountedOutsideStringsOnly) {
  EXPECT_EQ(JsonTextDepth("{\"a\":[1,[2]]}"), 3);
  EXPECT_EQ(JsonTextDepth("{\"a\":\"[[[[{{{{\"}"), 1);
  EXPECT_EQ(JsonTextDepth("{\"a\":\"\\\"[[[\"}"), 1);  // an escaped quote stays in the string
  EXPECT_EQ(JsonTextDepth(std::string(1000, '[')), kMaxFrameDepth + 1);  // stops at the cap
}

// Issue 48: what the agent sends is valid JSON whatever bytes its strings
// hold (a netdev named "\xff", a log tail): EncodeFrame never throws.
TEST(Wire, EncodesAMessageWhoseStringsAreNotUtf8) {
  Json push = MakePush("counters", {{"counters", {{"x\xff.rx_bytes", 1}}}, {"log_tail", "\xC3"}});
  std::string frame;
  ASSERT_NO_THROW(frame = EncodeFrame(push));
  FrameDecoder d;
  d.Feed(frame);
  auto back = d.Next();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ((**back)["log_tail"], "\xEF\xBF\xBD");
  EXPECT_TRUE((**back)["counters"].contains("x\xEF\xBF\xBD.rx_bytes"));
}

}  // namespace
}  // namespace fdrill
