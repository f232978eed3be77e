#include "workloads/half_float.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "workloads/elements.h"

namespace fdrill {
namespace {

TEST(WorkloadHalfFloat, IntegersUpToTheMantissaAreExact) {
  for (int v = -2048; v <= 2048; ++v) {
    ASSERT_EQ(HalfBitsToFloat(FloatToHalfBits(static_cast<float>(v))), static_cast<float>(v)) << v;
  }
  for (int v = -256; v <= 256; ++v) {
    ASSERT_EQ(Bfloat16BitsToFloat(FloatToBfloat16Bits(static_cast<float>(v))),
              static_cast<float>(v))
        << v;
  }
  for (int k = 0; k <= 15; ++k)
    EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(std::ldexp(1.0f, k))), std::ldexp(1.0f, k));
  for (int k = 0; k <= 127; ++k) {
    EXPECT_EQ(Bfloat16BitsToFloat(FloatToBfloat16Bits(std::ldexp(1.0f, k))), std::ldexp(1.0f, k));
  }
}

TEST(WorkloadHalfFloat, KnownEncodings) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);               // largest finite
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);               // rounds to infinity
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(FloatToHalfBits(std::ldexp(3.0f, -26)), 0x0001);  // above the tie
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToBfloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBfloat16Bits(-2.0f), 0xc000);
  EXPECT_TRUE(
      std::isnan(HalfBitsToFloat(FloatToHalfBits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(
      Bfloat16BitsToFloat(FloatToBfloat16Bits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(HalfBitsToFloat(FloatToHalfBits(std::numeric_limits<float>::infinity()))));
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfBitsToFloat(0x8000), -0.0f);
}

TEST(WorkloadHalfFloat, RoundsToNearestEven) {
  // float16 spacing is 2 in [2048, 4096): odd integers are ties.
  EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(2049.0f)), 2048.0f);
  EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(2051.0f)), 2052.0f);
  EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(2049.5f)), 2050.0f);
  // bfloat16 spacing is 2 in [256, 512).
  EXPECT_EQ(Bfloat16BitsToFloat(FloatToBfloat16Bits(257.0f)), 256.0f);
  EXPECT_EQ(Bfloat16BitsToFloat(FloatToBfloat16Bits(259.0f)), 260.0f);
  EXPECT_EQ(Bfloat16BitsToFloat(FloatToBfloat16Bits(257.5f)), 258.0f);
}

TEST(WorkloadHalfFloat, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float f = HalfBitsToFloat(h);
    if (!std::isnan(f)) {
      ASSERT_EQ(FloatToHalfBits(f), h) << std::hex << bits;
    }
    const float b = Bfloat16BitsToFloat(h);
    if (!std::isnan(b)) {
      ASSERT_EQ(FloatToBfloat16Bits(b), h) << std::hex << bits;
    }
  }
}

TEST(WorkloadElements, EncodeAndDecodeEveryDtype) {
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kFloat16, DType::kBfloat16}) {
    for (double v : {1.0, 7.0, 100.0, 256.0}) {
      EXPECT_EQ(DecodeElement(dtype, EncodeValue(dtype, v)), v) << DTypeName(dtype);
    }
  }
  EXPECT_EQ(EncodeValue(DType::kFloat32, 1), 0x3f800000u);
  EXPECT_EQ(EncodeValue(DType::kInt32, -1), 0xffffffffu);
  EXPECT_EQ(DecodeElement(DType::kBfloat16, EncodeValue(DType::kBfloat16, std::ldexp(1.0, 127))),
            std::ldexp(1.0, 127));
  EXPECT_EQ(DecodeElement(DType::kFloat64, EncodeValue(DType::kFloat64, std::ldexp(1.0, 1023))),
            std::ldexp(1.0, 1023));
  EXPECT_EQ(DecodeElement(DType::kInt32, 0xffffffffu), -1.0);
  std::byte buffer[16] = {};
  StoreBits(buffer, 2, 3, 0xabcd);
  EXPECT_EQ(LoadBits(buffer, 2, 3), 0xabcdu);
  EXPECT_EQ(LoadBits(buffer, 2, 2), 0u);
}

}  // namespace
}  // namespace fdrill
