// Text for HTML and XML documents (report.html, junit.xml): escaping of the
// five special characters, and removal of what XML 1.0 forbids outright
// (control characters other than tab, newline and carriage return), so a
// stray byte in a node name or an error message cannot break the document.
#pragma once

#include <string>
#include <string_view>

namespace fdrill {

// &, <, >, " and ' escaped; forbidden control characters dropped. Safe in
// element text and in double- or single-quoted attribute values.
std::string EscapeXml(std::string_view text);

}  // namespace fdrill
