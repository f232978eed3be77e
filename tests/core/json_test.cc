// Issue 48: one byte that is not UTF-8 once stopped the agent's timers
// (nlohmann's dump threw type_error.316 in its tick). DumpJson never
// throws; ValidUtf8 keeps valid text and replaces the rest; Utf8Tail cuts a
// log on a character boundary; JsonDepth measures without recursing.
#include "common/core/json.h"

#include <gtest/gtest.h>

namespace fdrill {
namespace {

TEST(ValidUtf8, KeepsValidTextAndReplacesEachBadSequence) {
  EXPECT_EQ(ValidUtf8("fab0"), "fab0");
  EXPECT_EQ(ValidUtf8("n\xC3\xBC l\xE2\x82\xAC \xF0\x9F\x98\x80"),
            "n\xC3\xBC l\xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(ValidUtf8("\xff"), "\xEF\xBF\xBD");
  EXPECT_EQ(ValidUtf8("a\xffz"), "a\xEF\xBF\xBDz");
  EXPECT_EQ(ValidUtf8("\x80"), "\xEF\xBF\xBD");                  // a lone continuation byte
  EXPECT_EQ(ValidUtf8("\xC3"), "\xEF\xBF\xBD");                  // truncated at the end
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80").find("\xEF\xBF\xBD"), 0u);             // past U+10FFFF
  EXPECT_EQ(ValidUtf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(DumpJson, NeverThrowsOnBytesThatAreNotUtf8InValuesOrKeys) {
  Json j = {{"ifname", "eth\xff"}, {"tail", std::string("\xE2\x82", 2)}};
  j["n\xfe"] = 1;
  EXPECT_THROW((void)j.dump(), Json::type_error);  // what the agent met
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(j));
  Json back = Json::parse(text);  // valid JSON, valid UTF-8
  EXPECT_EQ(back["ifname"], "eth\xEF\xBF\xBD");
  EXPECT_EQ(back["tail"], "\xEF\xBF\xBD");  // a truncated sequence: one U+FFFD
  EXPECT_TRUE(back.contains("n\xEF\xBF\xBD"));
  const Json small = {{"a", 1}};
  EXPECT_EQ(DumpJson(small, 2), small.dump(2));
}

TEST(ParseOutsideJson, ReadsAToolsOutputThatNamesANetdevWithAByteThatIsNotUtf8) {
  // What `ip -j addr show` prints with a netdev named "x\xff" in the node.
  const std::string out = "[{\"ifname\":\"lo\"},{\"ifname\":\"x\xff\"}]";
  EXPECT_TRUE(Json::parse(out, nullptr, false).is_discarded());
  Json j = ParseOutsideJson(out);
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j[1]["ifname"], "x\xEF\xBF\xBD");
}

TEST(Utf8Tail, CutsOnACharacterBoundary) {
  const std::string log =
      "ab\xE2\x82\xAC"
      "cd";  // a, b, the euro sign, c, d
  EXPECT_EQ(Utf8Tail(log, 100), log);
  EXPECT_EQ(std::string(Utf8Tail(log, 5)),
            "\xE2\x82\xAC"
            "cd");
  EXPECT_EQ(std::string(Utf8Tail(log, 4)), "cd");  // inside the euro sign: dropped whole
  EXPECT_EQ(std::string(Utf8Tail(log, 3)), "cd");
  EXPECT_EQ(std::string(Utf8Tail(log, 2)), "cd");
  EXPECT_EQ(ValidUtf8(Utf8Tail(log, 4)), "cd");
}

TEST(JsonDepth, CountsNestingWithoutRecursing) {
  EXPECT_EQ(JsonDepth(Json(1)), 0);
  EXPECT_EQ(JsonDepth(Json::object()), 1);
  EXPECT_EQ(JsonDepth(Json{{"a", {1, {2, 3}}}}), 3);
  // 100,000 deep: what overflowed the agent's stack in its audit writer.
  Json deep = Json::array();
  Json* at = &deep;
  for (int i = 0; i < 100000; ++i) at = &(*at)[0];
  *at = 1;
  EXPECT_EQ(JsonDepth(deep), 100000);
  EXPECT_EQ(JsonDepth(deep, 65), 65);
}

}  // namespace
}  // namespace fdrill
