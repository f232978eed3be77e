#include "reports/junit_report.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "reports/xml_text.h"

namespace fdrill {

namespace {

std::string Value(const ExpectValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const double* d = std::get_if<double>(&v)) return fmt::format("{:.6g}", *d);
  return "null (not measured)";
}

}  // namespace

std::string RenderJunit(const Summary& s) {
  const std::string suite = "fdrill." + (s.name.empty() ? std::string("unnamed") : s.name);
  const auto failures = std::count_if(s.expectations.begin(), s.expectations.end(),
                                      [](const ExpectationResult& e) { return !e.pass; });
  const bool error = s.verdict == Verdict::kError;
  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" "
                 "skipped=\"0\">\n"
                 "  <properties><property name=\"verdict\" value=\"{}\"/></properties>\n",
                 EscapeXml(suite), s.expectations.size() + 1, failures, error ? 1 : 0,
                 VerdictName(s.verdict));
  for (const ExpectationResult& e : s.expectations) {
    fmt::format_to(w, "  <testcase classname=\"{}\" name=\"{}\"", EscapeXml(suite),
                   EscapeXml(e.name));
    if (e.pass) {
      out += "/>\n";
      continue;
    }
    const std::string measured = Value(e.measured);
    const std::string limit = Value(e.limit);
    fmt::format_to(w,
                   ">\n    <failure type=\"expectation\" message=\"{0}: measured {1}, limit {2}\">"
                   "measured: {1}\nlimit: {2}</failure>\n  </testcase>\n",
                   EscapeXml(e.name), EscapeXml(measured), EscapeXml(limit));
  }
  fmt::format_to(w, "  <testcase classname=\"{}\" name=\"harness\"", EscapeXml(suite));
  if (!error) {
    out += "/>\n";
  } else {
    std::string reasons;
    for (const std::string& e : s.errors) reasons += e + "\n";
    fmt::format_to(w, ">\n    <error type=\"harness\" message=\"{}\">{}</error>\n  </testcase>\n",
                   EscapeXml(s.errors.empty() ? "the drill could not be run" : s.errors.front()),
                   EscapeXml(reasons));
  }
  out += "</testsuite>\n";
  return out;
}

}  // namespace fdrill
