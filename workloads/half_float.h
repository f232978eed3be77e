// IEEE binary16 (float16) and bfloat16 in software: the host has no such
// types, and MPI has no such datatypes, yet the workload must fill, check
// and (MPI backend) reduce them. Conversions from float round to nearest,
// ties to even, as CUDA's __float2half_rn and __float2bfloat16_rn do;
// overflow gives infinity, NaN stays NaN. Conversions to float are exact.
// Pure functions, thread-safe.
//
// Why float is a safe middle step for the MPI reductions: a sum or product
// of two float16 or bfloat16 values computed in float and then rounded once
// to the half type is correctly rounded, because float's 24-bit significand
// is at least 2p + 2 bits for p = 11 (float16) and p = 8 (bfloat16)
// (Figueroa, "When is double rounding innocuous?", 1995). NCCL computes its
// half-type reductions in float the same way.
#pragma once

#include <cstdint>

namespace fdrill {

uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);

uint16_t FloatToBfloat16Bits(float value);
float Bfloat16BitsToFloat(uint16_t bits);

}  // namespace fdrill
