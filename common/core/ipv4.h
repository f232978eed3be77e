// Ipv4Prefix: an IPv4 address or prefix as scenarios and fault params write
// them ("198.18.0.2", "198.18.0.0/24", "0.0.0.0/0"), for the guards that must
// see that a prefix holds an address (a partition from 0.0.0.0/0 cuts the
// controller off as surely as one from its own address). Pure; no OS.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fdrill {

struct Ipv4Prefix {
  uint32_t addr = 0;  // host order, the bits past len cleared
  int len = 32;

  uint32_t Mask() const { return len == 0 ? 0 : ~uint32_t{0} << (32 - len); }
  bool Contains(uint32_t a) const { return (a & Mask()) == addr; }
  // Some address is in both.
  bool Overlaps(const Ipv4Prefix& o) const {
    const uint32_t m = len < o.len ? Mask() : o.Mask();
    return (addr & m) == (o.addr & m);
  }
  std::string ToString() const;
};

// "a.b.c.d" (len 32) or "a.b.c.d/n" (0..32), decimal octets 0..255;
// nullopt for anything else (an interface name, an IPv6 address).
std::optional<Ipv4Prefix> ParseIpv4Prefix(std::string_view text);

}  // namespace fdrill
