#include "injectors/param_values.h"

#include <arpa/inet.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "common/core/json.h"

namespace fdrill {

namespace {

Status KeyError(const std::string& key, const std::string& what) {
  return InvalidArgument("params." + key + ": " + what);
}

// ParamReader has no accessor for these shapes; any accessor records the key
// as read, whatever it returns, and that is all we want from it here.
void MarkRead(ParamReader& p, const std::string& key) { (void)p.String(key, std::string()); }

const Json* Raw(const Json& params, const std::string& key) {
  if (!params.is_object()) return nullptr;
  auto it = params.find(key);
  return it == params.end() ? nullptr : &*it;
}

// "12.5" -> 12'500'000 millionths; nullopt when it is not a plain decimal
// with at most six fractional digits. A whole part past 9 digits reads as
// 999999999 (out of range either way, and no overflow).
std::optional<uint64_t> ParseDecimalMicros(const std::string& text) {
  uint64_t whole = 0, frac = 0;
  size_t i = 0, whole_digits = 0, frac_digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++whole_digits) {
    whole = whole_digits < 9 ? whole * 10 + static_cast<uint64_t>(text[i] - '0') : 999'999'999;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++frac_digits) {
      if (frac_digits == 6) return std::nullopt;
      frac = frac * 10 + static_cast<uint64_t>(text[i] - '0');
    }
    if (frac_digits == 0) return std::nullopt;
  }
  if (i != text.size() || whole_digits == 0) return std::nullopt;
  for (size_t d = frac_digits; d < 6; ++d) frac *= 10;
  return whole * 1'000'000 + frac;
}

std::string PercentOutOfRange(const std::string& text) {
  return "percentage " + text + " is out of range: accepted 0.000001..100";
}

std::string TrimZeros(std::string s) {
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

Result<uint64_t> ReadPercent(ParamReader& p, const Json& params, const std::string& key) {
  MarkRead(p, key);
  const Json* v = Raw(params, key);
  const std::string form = "a percentage greater than 0 and at most 100, like 1, 0.5 or \"0.5%\"";
  if (!v) return KeyError(key, "required (" + form + ")");
  std::string text;
  if (v->is_number_integer()) {
    text = std::to_string(v->get<int64_t>());
  } else if (v->is_number_float()) {
    if (std::fabs(v->get<double>()) > 1e9) return KeyError(key, PercentOutOfRange(DumpJson(*v)));
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6f", v->get<double>());
    text = buf;
  } else if (v->is_string()) {
    text = v->get<std::string>();
    if (!text.empty() && text.back() == '%') text.pop_back();
  } else {
    return KeyError(key, "must be " + form);
  }
  // A negative or a long number is a percentage, just not one we take.
  const bool negative = !text.empty() && text[0] == '-';
  auto micros = ParseDecimalMicros(negative ? text.substr(1) : text);
  if (!micros) return KeyError(key, "\"" + text + "\" is not " + form + " (at most six decimals)");
  if (negative || *micros == 0 || *micros > 100'000'000)
    return KeyError(key, PercentOutOfRange(text));
  return *micros;
}

std::string PercentToProbability(uint64_t micro_percent) {
  // probability = percent / 100 = micro_percent / 1e8
  if (micro_percent >= 100'000'000) return "1";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0.%08llu", static_cast<unsigned long long>(micro_percent));
  return TrimZeros(buf);
}

std::string FormatPercent(uint64_t micro_percent) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%llu.%06llu",
                static_cast<unsigned long long>(micro_percent / 1'000'000),
                static_cast<unsigned long long>(micro_percent % 1'000'000));
  return TrimZeros(buf) + "%";
}

Status CheckIpv4(const std::string& key, const std::string& text) {
  std::string addr = text;
  auto slash = text.find('/');
  if (slash != std::string::npos) {
    addr = text.substr(0, slash);
    std::string len = text.substr(slash + 1);
    bool digits =
        !len.empty() && len.size() <= 2 && len.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(len) > 32) {
      return KeyError(key, "\"" + text + "\" has a bad prefix length (0-32)");
    }
  }
  in_addr parsed{};
  if (inet_pton(AF_INET, addr.c_str(), &parsed) != 1) {
    if (addr.find(':') != std::string::npos) {
      return KeyError(
          key,
          "\"" + text + "\" is IPv6; only IPv4 addresses are supported (iptables, not ip6tables)");
    }
    return KeyError(key,
                    "\"" + text + "\" is not an IPv4 address like 198.18.0.2 or 198.18.0.0/24");
  }
  return Status::Ok();
}

Result<std::optional<std::string>> ReadIpv4(ParamReader& p, const Json& params,
                                            const std::string& key) {
  if (!Raw(params, key)) {
    MarkRead(p, key);
    return std::optional<std::string>();
  }
  auto s = p.String(key);
  if (!s.ok()) return s.status();
  if (auto st = CheckIpv4(key, *s); !st.ok()) return st;
  return std::optional<std::string>(*s);
}

Result<std::vector<std::string>> ReadIpv4List(ParamReader& p, const Json& params,
                                              const std::string& key) {
  MarkRead(p, key);
  const Json* v = Raw(params, key);
  const std::string form = "a list of IPv4 addresses, like [198.18.0.2, 198.18.0.3]";
  if (!v) return KeyError(key, "required (" + form + ")");
  std::vector<std::string> out;
  if (v->is_string()) {
    std::string all = v->get<std::string>();
    size_t start = 0;
    while (start <= all.size()) {
      size_t comma = all.find(',', start);
      std::string item =
          all.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      out.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else if (v->is_array()) {
    for (const auto& e : *v) {
      if (!e.is_string()) return KeyError(key, "must be " + form);
      out.push_back(e.get<std::string>());
    }
  } else {
    return KeyError(key, "must be " + form);
  }
  if (out.empty()) return KeyError(key, "must not be empty");
  std::set<std::string> seen;
  for (const auto& a : out) {
    if (auto st = CheckIpv4(key, a); !st.ok()) return st;
    if (!seen.insert(a).second) return KeyError(key, "\"" + a + "\" is listed twice");
  }
  return out;
}

std::vector<std::string> PeerDirection::PeerMatch() const {
  if (!peer) return {};
  return {egress ? "-d" : "-s", *peer};
}

Result<PeerDirection> ReadPeerDirection(ParamReader& p, const Json& params) {
  auto direction = p.String("direction", "egress");
  if (!direction.ok()) return direction.status();
  if (*direction != "egress" && *direction != "ingress") {
    return InvalidArgument("params.direction: must be egress or ingress, not \"" + *direction +
                           "\"");
  }
  auto peer = ReadIpv4(p, params, "peer");
  if (!peer.ok()) return peer.status();
  return PeerDirection{*direction == "egress", *peer};
}

Result<std::optional<int64_t>> ReadIntOrHex(ParamReader& p, const Json& params,
                                            const std::string& key, int64_t min, int64_t max) {
  MarkRead(p, key);
  const Json* v = Raw(params, key);
  if (!v) return std::optional<int64_t>();
  int64_t n = 0;
  if (v->is_number_integer()) {
    n = v->get<int64_t>();
  } else if (v->is_string()) {
    std::string s = v->get<std::string>();
    size_t used = 0;
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    try {
      n = hex ? std::stoll(s.substr(2), &used, 16) : std::stoll(s, &used, 10);
      if (hex) used += 2;
    } catch (const std::out_of_range&) {
      return KeyError(key, IntOutOfRange(s, min, max));
    } catch (...) {
      used = 0;
    }
    if (s.empty() || used != s.size())
      return KeyError(key, "\"" + s + "\" is not an integer (decimal or 0x-hex)");
  } else {
    return KeyError(key, "must be an integer (decimal or 0x-hex)");
  }
  if (n < min || n > max) return KeyError(key, IntOutOfRange(std::to_string(n), min, max));
  return std::optional<int64_t>(n);
}

}  // namespace fdrill
