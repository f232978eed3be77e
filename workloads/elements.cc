#include "workloads/elements.h"

#include "workloads/half_float.h"

namespace fdrill {

uint64_t EncodeValue(DType dtype, double value) {
  switch (dtype) {
    case DType::kFloat32:
      return std::bit_cast<uint32_t>(static_cast<float>(value));
    case DType::kFloat64:
      return std::bit_cast<uint64_t>(static_cast<double>(value));
    case DType::kInt32:
      return static_cast<uint32_t>(static_cast<int32_t>(value));
    case DType::kFloat16:
      return FloatToHalfBits(static_cast<float>(value));
    case DType::kBfloat16:
      return FloatToBfloat16Bits(static_cast<float>(value));
  }
  return 0;
}

double DecodeElement(DType dtype, uint64_t bits) {
  switch (dtype) {
    case DType::kFloat32:
      return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case DType::kFloat64:
      return std::bit_cast<double>(bits);
    case DType::kInt32:
      return static_cast<int32_t>(static_cast<uint32_t>(bits));
    case DType::kFloat16:
      return HalfBitsToFloat(static_cast<uint16_t>(bits));
    case DType::kBfloat16:
      return Bfloat16BitsToFloat(static_cast<uint16_t>(bits));
  }
  return 0;
}

}  // namespace fdrill
