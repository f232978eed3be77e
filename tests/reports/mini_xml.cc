#include "tests/reports/mini_xml.h"

#include <cctype>

namespace fdrill::reports_test {

namespace {

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == ':';
}

// '&' must open &amp; &lt; &gt; &quot; &apos; or &#N; / &#xN;.
bool EntitiesValid(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') return false;
    if (s[i] != '&') continue;
    const size_t semi = s.find(';', i);
    if (semi == std::string_view::npos) return false;
    const std::string_view e = s.substr(i + 1, semi - i - 1);
    const bool named = e == "amp" || e == "lt" || e == "gt" || e == "quot" || e == "apos";
    const bool numeric = e.size() > 1 && e[0] == '#';
    if (!named && !numeric) return false;
    i = semi;
  }
  return true;
}

}  // namespace

XmlDocument ParseXml(std::string_view text) {
  XmlDocument doc;
  std::vector<size_t> open;  // indexes into doc.elements
  size_t i = 0;
  bool root_done = false;
  auto fail = [&](const std::string& what) {
    doc.error = what + " at offset " + std::to_string(i);
    return doc;
  };
  if (text.starts_with("<?xml")) {
    i = text.find("?>");
    if (i == std::string_view::npos) return fail("unterminated declaration");
    i += 2;
  }
  while (i < text.size()) {
    if (text[i] != '<') {
      const size_t next = text.find('<', i);
      const std::string_view chunk =
          text.substr(i, next == std::string_view::npos ? next : next - i);
      if (!EntitiesValid(chunk)) return fail("bad text");
      if (open.empty()) {
        for (char c : chunk) {
          if (!std::isspace(static_cast<unsigned char>(c))) return fail("text outside the root");
        }
      } else {
        doc.elements[open.back()].text += chunk;
      }
      if (next == std::string_view::npos) break;
      i = next;
      continue;
    }
    if (text.substr(i, 2) == "</") {
      size_t j = i + 2;
      while (j < text.size() && NameChar(text[j])) ++j;
      const std::string name(text.substr(i + 2, j - i - 2));
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j >= text.size() || text[j] != '>') return fail("bad end tag");
      if (open.empty() || doc.elements[open.back()].name != name) {
        return fail("end tag </" + name + "> does not match");
      }
      open.pop_back();
      if (open.empty()) root_done = true;
      i = j + 1;
      continue;
    }
    if (root_done) return fail("a second root element");
    size_t j = i + 1;
    while (j < text.size() && NameChar(text[j])) ++j;
    XmlElement e;
    e.name = std::string(text.substr(i + 1, j - i - 1));
    if (e.name.empty()) return fail("empty tag name");
    e.parent = open.empty() ? "" : doc.elements[open.back()].name;
    bool self_closing = false;
    while (true) {
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j >= text.size()) return fail("unterminated tag");
      if (text[j] == '>') break;
      if (text.substr(j, 2) == "/>") {
        self_closing = true;
        ++j;
        break;
      }
      const size_t name_start = j;
      while (j < text.size() && NameChar(text[j])) ++j;
      const std::string attr(text.substr(name_start, j - name_start));
      if (attr.empty() || j + 1 >= text.size() || text[j] != '=' ||
          (text[j + 1] != '"' && text[j + 1] != '\'')) {
        return fail("bad attribute in <" + e.name + ">");
      }
      const char quote = text[j + 1];
      const size_t end = text.find(quote, j + 2);
      if (end == std::string_view::npos) return fail("unterminated attribute value");
      const std::string_view value = text.substr(j + 2, end - j - 2);
      if (!EntitiesValid(value)) return fail("bad attribute value");
      if (!e.attributes.emplace(attr, std::string(value)).second) {
        return fail("duplicate attribute " + attr);
      }
      j = end + 1;
    }
    doc.elements.push_back(std::move(e));
    if (self_closing) {
      if (open.empty()) root_done = true;
    } else {
      open.push_back(doc.elements.size() - 1);
    }
    i = j + 1;
  }
  if (!open.empty()) return fail("unclosed <" + doc.elements[open.back()].name + ">");
  if (doc.elements.empty()) return fail("no root element");
  return doc;
}

}  // namespace fdrill::reports_test
