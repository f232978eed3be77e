#include "common/core/ipv4.h"

namespace fdrill {

namespace {

// A decimal number of 1..max_digits digits no larger than max; advances s.
std::optional<uint32_t> Number(std::string_view& s, size_t max_digits, uint32_t max) {
  size_t n = 0;
  uint32_t v = 0;
  while (n < s.size() && n < max_digits + 1 && s[n] >= '0' && s[n] <= '9') {
    v = v * 10 + static_cast<uint32_t>(s[n] - '0');
    ++n;
  }
  if (n == 0 || n > max_digits || v > max) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

}  // namespace

std::string Ipv4Prefix::ToString() const {
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) {
    out += std::to_string((addr >> shift) & 0xff);
    if (shift > 0) out += '.';
  }
  return out + "/" + std::to_string(len);
}

std::optional<Ipv4Prefix> ParseIpv4Prefix(std::string_view text) {
  std::string_view s = text;
  uint32_t addr = 0;
  for (int i = 0; i < 4; ++i) {
    if (i > 0) {
      if (s.empty() || s.front() != '.') return std::nullopt;
      s.remove_prefix(1);
    }
    auto octet = Number(s, 3, 255);
    if (!octet) return std::nullopt;
    addr = (addr << 8) | *octet;
  }
  Ipv4Prefix p;
  if (!s.empty()) {
    if (s.front() != '/') return std::nullopt;
    s.remove_prefix(1);
    auto len = Number(s, 2, 32);
    if (!len || !s.empty()) return std::nullopt;
    p.len = static_cast<int>(*len);
  }
  p.addr = addr & p.Mask();
  return p;
}

}  // namespace fdrill
