// junit.xml: the verdict for CI systems (Jenkins, GitLab, GitHub test
// reporters), after ReFrame's JUnit output. One <testsuite> named after the
// drill; one <testcase> per expectation, in summary order, with a <failure>
// saying measured against limit when it missed; and a last testcase,
// "harness", with an <error> listing the reasons when the verdict is error
// (the drill could not be run, which is not the fabric's failure). So the
// suite holds expectations + 1 testcases. Pure.
#pragma once

#include <string>

#include "reports/summary.h"

namespace fdrill {

std::string RenderJunit(const Summary& summary);

}  // namespace fdrill
