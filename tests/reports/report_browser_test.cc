// report.html in a real browser: Debian's chromium, headless, renders the
// page of a synthetic drill to a screenshot without a console error. Skipped,
// with the reason, where chromium is not installed (test.sh installs it).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "common/host/real_process_runner.h"
#include "reports/report.h"
#include "tests/reports/synthetic_run.h"

namespace fdrill {
namespace {

namespace fs = std::filesystem;
using reports_test::SyntheticRun;
using reports_test::TempDir;
using reports_test::WriteText;
using reports_test::WriteWithReports;

std::optional<std::string> FindChromium() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      const fs::path candidate = fs::path(dir) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return std::nullopt;
}

struct Shot {
  uintmax_t png_bytes = 0;
  std::string log;
};

// Renders `html` (a file) to a 1200×1600 PNG; its size and the browser's log.
Shot Screenshot(const std::string& chromium, const fs::path& html, const fs::path& work) {
  const fs::path png = work / (html.stem().string() + ".png");
  RealProcessRunner runner;
  Result<ProcessResult> r = runner.Run(
      {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
       "--disable-component-update", "--disable-sync", "--no-first-run",
       "--user-data-dir=" + (work / "profile").string(), "--enable-logging=stderr", "--v=0",
       "--screenshot=" + png.string(), "--window-size=1200,1600", "file://" + html.string()},
      std::chrono::seconds(90));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  EXPECT_EQ(r->exit_code, 0) << r->err;
  std::error_code ec;
  return {.png_bytes = fs::exists(png, ec) ? fs::file_size(png, ec) : 0, .log = r->out + r->err};
}

TEST(ReportHtmlInChromium, RendersThePlotsWithoutConsoleErrors) {
  std::optional<std::string> chromium = FindChromium();
  if (!chromium) GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  TempDir run_dir, work;
  SyntheticRun run = SyntheticRun::SlowN2(22.0);
  ASSERT_TRUE(WriteWithReports(run, run_dir.path()).ok());
  // A blank page of the same size: what a screenshot of nothing weighs.
  WriteText(work.path() / "blank.html",
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
            "<link rel=\"icon\" href=\"data:,\"></head><body></body></html>\n");

  const Shot blank = Screenshot(*chromium, work.path() / "blank.html", work.path());
  const Shot report = Screenshot(*chromium, run_dir.path() / kHtmlReportFile, work.path());
  ASSERT_GT(blank.png_bytes, 0u) << blank.log;
  ASSERT_GT(report.png_bytes, 0u) << report.log;
  // Two charts of four lines each, tables and text: many times a blank page.
  EXPECT_GT(report.png_bytes, 10 * blank.png_bytes)
      << "report " << report.png_bytes << " B, blank " << blank.png_bytes << " B";
  for (const char* sign : {":CONSOLE", "Uncaught", "Failed to load resource", "net::ERR_"}) {
    EXPECT_EQ(report.log.find(sign), std::string::npos) << sign << " in:\n" << report.log;
  }
  if (const char* keep = std::getenv("FDRILL_KEEP_SCREENSHOT")) {
    fs::copy_file(work.path() / "report.png", keep, fs::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace fdrill
