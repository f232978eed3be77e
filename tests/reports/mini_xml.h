// A minimal XML well-formedness checker for the junit.xml tests: one root,
// balanced tags, quoted attributes, no duplicate attribute, no raw '<' in text
// or values, only the five predefined entities and numeric references. Not a
// general parser (no DTD, CDATA or comments, which junit.xml never holds).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fdrill::reports_test {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;  // values as written (entities kept)
  std::string parent;                             // "" for the root
  std::string text;                               // direct text, entities kept
};

// Every element in document order; `error` empty when the document is well
// formed, else what is wrong and where.
struct XmlDocument {
  std::vector<XmlElement> elements;
  std::string error;
};

XmlDocument ParseXml(std::string_view text);

}  // namespace fdrill::reports_test
