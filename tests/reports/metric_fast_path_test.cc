// The metrics fast path (metric_fast_path.h) must agree with the strict
// parser on every line it accepts, and decline every line it does not fully
// understand, so errors still name file:line and the key.
#include "reports/metric_fast_path.h"

#include <gtest/gtest.h>

#include "reports/run_dir.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

void ExpectSame(const MetricRecord& a, const MetricRecord& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.nranks, b.nranks);
  EXPECT_EQ(a.node, b.node);
  EXPECT_EQ(a.iter, b.iter);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.time_ms, b.time_ms);  // bit for bit: both round correctly
  EXPECT_EQ(a.wait_ms, b.wait_ms);
  EXPECT_EQ(a.algbw_gbps, b.algbw_gbps);
  EXPECT_EQ(a.busbw_gbps, b.busbw_gbps);
  EXPECT_EQ(a.wrong, b.wrong);
  EXPECT_EQ(a.t, b.t);
}

// Accepted lines give exactly what ParseMetricLine gives.
void ExpectAccepted(const std::string& line) {
  SCOPED_TRACE(line);
  MetricRecord fast;
  ASSERT_TRUE(ParseMetricLineFast(line, &fast));
  Result<MetricRecord> strict = ParseMetricLine(line, "x");
  ASSERT_TRUE(strict.ok()) << strict.status().ToString();
  ExpectSame(fast, *strict);
}

void ExpectDeclined(const std::string& line) {
  MetricRecord fast;
  EXPECT_FALSE(ParseMetricLineFast(line, &fast)) << line;
}

constexpr char kMinimal[] = R"("rank":1,"iter":7,"bytes":1024,"time_ms":0.5,"wrong":0,"t":3.25)";

TEST(MetricFastPath, AgreesWithTheStrictParserOnWhatItAccepts) {
  for (const std::string& line : reports_test::SyntheticRun::Standard().MetricLines()) {
    ExpectAccepted(line);
  }
  ExpectAccepted(std::string("{") + kMinimal + "}");
  ExpectAccepted(std::string("{") + kMinimal + R"(,"wait_ms":12.5})");
  ExpectAccepted(std::string(" { ") + kMinimal + R"( , "host" : "h1" , "op":null } )" + "\r");
  ExpectAccepted(std::string("{") + kMinimal + R"(,"host":"h1","node":"n1","extra":"x"} )");
  ExpectAccepted(std::string("{") + kMinimal + R"(,"node":null,"host":"h1","x":true,"y":-0})");
  ExpectAccepted(R"({"rank":0,"iter":-3,"bytes":0,"time_ms":1e-3,"wrong":2,"t":-1.5E+2})");
  ExpectAccepted(std::string("{") + kMinimal + R"(,"workload":"noisy-b"})");
}

TEST(MetricFastPath, DeclinesWhatItDoesNotFullyUnderstand) {
  const std::string min = kMinimal;
  ExpectDeclined("{" + min + R"(,"extra":{"a":1}})");       // nested object
  ExpectDeclined("{" + min + R"(,"workload":"a\u0062"})");  // an escape: the strict parser's
  ExpectDeclined("{" + min + R"(,"workload":7})");
  ExpectDeclined("{" + min + R"(,"extra":[1]})");          // nested array
  ExpectDeclined("{" + min + R"(,"node":"n\u0031"})");     // escape
  ExpectDeclined("{" + min + ",\"node\":\"n\xc3\xa9\"}");  // non-ASCII
  ExpectDeclined("{" + min + R"(,"rank":2})");             // duplicate key
  ExpectDeclined(R"({"rank":1.0,"iter":7,"bytes":1,"time_ms":1,"wrong":0,"t":1})");
  ExpectDeclined(R"({"rank":1,"iter":7,"bytes":1,"time_ms":1,"wrong":0})");  // no t
  ExpectDeclined(R"({"rank":1,"iter":7,"bytes":1,"time_ms":1,"wrong":null,"t":1})");
  ExpectDeclined(R"({"rank":1,"iter":7,"bytes":1,"time_ms":0,"wrong":0,"t":1})");
  ExpectDeclined(R"({"rank":1,"iter":7,"bytes":99999999999999999999,"time_ms":1,"wrong":0,"t":1})");
  ExpectDeclined(R"({"rank":"1","iter":7,"bytes":1,"time_ms":1,"wrong":0,"t":1})");
  ExpectDeclined("{" + min + R"(,"op":3})");
  ExpectDeclined("{" + min + R"(,"wait_ms":-1})");  // the strict parser names it
  ExpectDeclined("{" + min + "} x");
  ExpectDeclined("{" + min + ",}");
  ExpectDeclined("{" + min + R"(,"t2":01})");
  ExpectDeclined("{" + min + R"(,"t2":1.})");
  ExpectDeclined("{" + min + R"(,"t2":tru})");
  ExpectDeclined("[" + min + "]");
  ExpectDeclined("");
}

}  // namespace
}  // namespace fdrill
