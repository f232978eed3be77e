// One element of a DType in a byte buffer: its bits as an integer (the low
// DTypeSize bytes, host byte order, which the check compares for equality)
// and its numeric value. The data check uses only whole numbers that are
// exact in the dtype (pattern.h), so encoding them is exact. Pure,
// thread-safe.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "workloads/collective.h"

namespace fdrill {

static_assert(std::endian::native == std::endian::little,
              "element bits are read as little-endian integers");

// The bits of the whole number `value` as one element of `dtype`: exact
// for the values pattern.h uses (integers up to 2^53 and powers of two up
// to the dtype's largest; a double holds them all exactly). float16 and
// bfloat16 go through float and round to nearest even; int32 truncates.
uint64_t EncodeValue(DType dtype, double value);

// The numeric value of an element's bits (exact: every dtype fits a double).
double DecodeElement(DType dtype, uint64_t bits);

// Raw access to element `index` of a buffer of `size`-byte elements.
inline uint64_t LoadBits(const std::byte* data, size_t size, uint64_t index) {
  uint64_t bits = 0;
  std::memcpy(&bits, data + index * size, size);
  return bits;
}
inline void StoreBits(std::byte* data, size_t size, uint64_t index, uint64_t bits) {
  std::memcpy(data + index * size, &bits, size);
}

}  // namespace fdrill
