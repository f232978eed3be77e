// What the Prometheus endpoint's tests share (prometheus_test.cc,
// metrics_http_test.cc).
//
// CheckExposition  a strict checker of the text exposition format 0.0.4,
//                  written from the spec (prometheus.io/docs/instrumenting/
//                  exposition_formats, "Text format details"); returns the
//                  problems found, "line N: why", empty when the text is
//                  valid. require_help_and_type adds fdrill's own rule for
//                  its output. prometheus_test.cc holds it to broken inputs.
// BusySnapshot     an agent's metrics with every shape the renderer handles:
//                  escaped labels, 2^64-1, VLANs, IB ports, NVLinks, names
//                  to sanitise and a value that is not a number.
#pragma once

#include <string>
#include <vector>

#include "agents/prometheus.h"

namespace fdrill::agents_test {

struct CheckOptions {
  bool require_help_and_type = false;  // fdrill's own rule for its output
};

std::vector<std::string> CheckExposition(const std::string& text, CheckOptions opt = {});

AgentMetricsSnapshot BusySnapshot();

}  // namespace fdrill::agents_test
