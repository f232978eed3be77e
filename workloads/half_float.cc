#include "workloads/half_float.h"

#include <bit>
#include <cmath>

namespace fdrill {

uint16_t FloatToHalfBits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exponent = (x >> 23) & 0xffu;
  const uint32_t mantissa = x & 0x7fffffu;
  if (exponent == 0xffu) {  // infinity, or NaN (kept quiet and non-zero)
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa != 0 ? 0x200u | (mantissa >> 13) : 0u));
  }
  // float16 biased exponent of the same value.
  const int32_t e = static_cast<int32_t>(exponent) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e >= 1) {
    // Normal: keep the top 10 mantissa bits, round on the 13 dropped ones.
    // A carry out of the mantissa correctly bumps the exponent (to
    // infinity at the top).
    uint32_t h = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
    const uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0)) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  // Subnormal float16: value = m * 2^-24, m = significand >> (14 - e).
  const int32_t shift = 14 - e;
  if (shift > 24) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
  const uint32_t significand = mantissa | 0x800000u;
  uint32_t m = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (m & 1u) != 0))
    ++m;  // may become the smallest normal: right bits
  return static_cast<uint16_t>(sign | m);
}

float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = (static_cast<uint32_t>(bits) & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // exact
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t FloatToBfloat16Bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu) != 0) {
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN: keep it a (quiet) NaN
  }
  // Round to nearest even on the 16 dropped bits; a carry rounds up into
  // the exponent, and to infinity past the largest finite value.
  const uint32_t bias = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + bias) >> 16);
}

float Bfloat16BitsToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

}  // namespace fdrill
