// Host interface of the vectorized re-pitching copy (gemm_pack_vec.cu).
#pragma once

#include <cuda_runtime.h>

#include "cuda/gemm_fastdiv.h"

namespace tc::cuda {

// One 16-bit operand to copy: `batch` matrices of rows x cols elements, element (r, c) of
// batch b at src + b * src_batch + r * sr + c, into dst with row pitch ld (ld * 2 a multiple
// of 16) and batch pitch rows * ld; columns cols .. ld - 1 are written as zeros. All in
// elements.
struct PackCopy {
  const void* src;
  void* dst;
  int batch;
  long long src_batch, rows, cols, sr, ld;
};

// Copies one or two operands in one launch (PDL when enabled). cudaErrorInvalidValue when a
// copy does not fit the kernel's 32-bit indexing (2^30 chunks per operand): the caller then
// uses launch_pack.
cudaError_t launch_pack_vec(const PackCopy* copies, int count, cudaStream_t stream);

}  // namespace tc::cuda
