#include "workloads/mpi_ops.h"

#include <cstdint>

#include "workloads/half_float.h"
#include "workloads/mpi_world.h"

namespace fdrill {

namespace {

// MPI_User_function for a 2-byte float type: inout[k] = in[k] op inout[k].
template <float (*Decode)(uint16_t), uint16_t (*Encode)(float), RedOp kOp>
void HalfReduce(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int k = 0; k < *len; ++k) {
    const float x = Decode(a[k]);
    const float y = Decode(b[k]);
    if constexpr (kOp == RedOp::kSum) {
      b[k] = Encode(x + y);
    } else if constexpr (kOp == RedOp::kProd) {
      b[k] = Encode(x * y);
    } else if constexpr (kOp == RedOp::kMin) {
      if (x < y) b[k] = a[k];  // the input itself: min/max never round
    } else {
      if (x > y) b[k] = a[k];
    }
  }
}

template <float (*Decode)(uint16_t), uint16_t (*Encode)(float)>
MPI_User_function* HalfFunction(RedOp redop) {
  switch (redop) {
    case RedOp::kSum:
      return HalfReduce<Decode, Encode, RedOp::kSum>;
    case RedOp::kProd:
      return HalfReduce<Decode, Encode, RedOp::kProd>;
    case RedOp::kMin:
      return HalfReduce<Decode, Encode, RedOp::kMin>;
    case RedOp::kMax:
      return HalfReduce<Decode, Encode, RedOp::kMax>;
  }
  return nullptr;
}

MPI_Op NativeOp(RedOp redop) {
  switch (redop) {
    case RedOp::kSum:
      return MPI_SUM;
    case RedOp::kProd:
      return MPI_PROD;
    case RedOp::kMin:
      return MPI_MIN;
    case RedOp::kMax:
      return MPI_MAX;
  }
  return MPI_OP_NULL;
}

}  // namespace

Result<MpiReduction> MakeMpiReduction(DType dtype, RedOp redop) {
  MpiReduction r;
  MPI_User_function* half = nullptr;
  switch (dtype) {
    case DType::kFloat32:
      r.type = MPI_FLOAT;
      break;
    case DType::kFloat64:
      r.type = MPI_DOUBLE;
      break;
    case DType::kInt32:
      r.type = MPI_INT32_T;
      break;
    case DType::kFloat16:
      r.type = MPI_UINT16_T;
      half = HalfFunction<HalfBitsToFloat, FloatToHalfBits>(redop);
      break;
    case DType::kBfloat16:
      r.type = MPI_UINT16_T;
      half = HalfFunction<Bfloat16BitsToFloat, FloatToBfloat16Bits>(redop);
      break;
  }
  if (half == nullptr) {
    r.op = NativeOp(redop);
    return r;
  }
  if (int rc = MPI_Op_create(half, /*commute=*/1, &r.op); rc != MPI_SUCCESS)
    return MpiError("MPI_Op_create", rc);
  r.user_op = true;
  return r;
}

void FreeMpiReduction(MpiReduction& reduction) {
  if (reduction.user_op && reduction.op != MPI_OP_NULL) MPI_Op_free(&reduction.op);
  reduction.user_op = false;
  reduction.op = MPI_OP_NULL;
}

}  // namespace fdrill
