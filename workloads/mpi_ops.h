// The MPI datatype and reduction op for each DType/RedOp. MPI has no
// float16 or bfloat16 datatypes, so those travel as MPI_UINT16_T and reduce
// through user-defined ops (MPI_Op_create, commutative) that compute in
// float and round once to the half type: correctly rounded (half_float.h),
// as NCCL's own half-type reductions. Every combination of the vocabulary is
// supported. An MpiReduction that owns a user op must be freed with
// FreeMpiReduction before MPI_Finalize. Not thread-safe (MPI calls).
#pragma once

#include <mpi.h>

#include "common/core/result.h"
#include "workloads/collective.h"

namespace fdrill {

struct MpiReduction {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  bool user_op = false;  // created here: free it
};

Result<MpiReduction> MakeMpiReduction(DType dtype, RedOp redop);
void FreeMpiReduction(MpiReduction& reduction);

}  // namespace fdrill
