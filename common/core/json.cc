#include "common/core/json.h"

#include <utility>
#include <vector>

namespace fdrill {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629, table 3-7
// of the Unicode standard), or 0 when none starts there.
size_t SequenceAt(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // no overlong forms
    if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

size_t FirstInvalidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
  return out;
}

std::string_view Utf8Tail(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::string_view tail = text.substr(text.size() - max_bytes);
  // At most three continuation bytes (10xxxxxx) can open a cut character.
  for (int k = 0; k < 3 && !tail.empty(); ++k) {
    if ((static_cast<unsigned char>(tail.front()) & 0xC0) != 0x80) break;
    tail.remove_prefix(1);
  }
  return tail;
}

std::string DumpJson(const Json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

Json ParseOutsideJson(std::string_view text) {
  return Json::parse(ValidUtf8(text), nullptr, /*allow_exceptions=*/false);
}

int JsonDepth(const Json& j, int cap) {
  if (!j.is_structured()) return 0;  // most of an audit line's fields: no stack to build
  int deepest = 0;
  std::vector<std::pair<const Json*, int>> stack = {{&j, 0}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    const int here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest >= cap) return cap;
    for (const Json& child : *v) stack.emplace_back(&child, here);
  }
  return deepest;
}

}  // namespace fdrill
