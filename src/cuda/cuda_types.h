// tc dtypes as CUDA library data types (cuBLASLt layouts), one mapping for the library, the
// benchmark's cuBLASLt peer and the GEMM lab.
#pragma once

#include <library_types.h>
#include <tc/tc.h>

namespace tc::cuda {

inline cudaDataType_t cuda_data_type(tc_dtype_t t) {
  switch (t) {
    case TC_DTYPE_F16:
      return CUDA_R_16F;
    case TC_DTYPE_BF16:
      return CUDA_R_16BF;
    case TC_DTYPE_I8:
      return CUDA_R_8I;
    case TC_DTYPE_I32:
      return CUDA_R_32I;
    default:  // f32 and tf32 (TF32 is a compute type, not a storage type)
      return CUDA_R_32F;
  }
}

}  // namespace tc::cuda
