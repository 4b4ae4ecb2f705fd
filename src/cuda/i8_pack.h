// Helper kernels of the cuBLASLt int8 rows (i8_pack.cu): cuBLASLt's integer kernels read only
// K-contiguous operands whose sizes and pitches are multiples of 4, so other layouts are copied
// into that form first, and C is computed into a padded scratch when N or ldc is not.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tc::cuda {

// dst[b][r][k] = src[b * src_batch + r * sr + k * sk] for r < rows, k < cols, else 0, for
// r < rows_pad and k < ld (dst dense: pitch ld, batch pitch rows_pad * ld).
cudaError_t launch_i8_pack(const int8_t* src, long long src_batch, int rows, int cols, long long sr,
                           long long sk, int8_t* dst, int rows_pad, int ld, int batch,
                           cudaStream_t stream);

// C[b][m][n] = (accumulate ? C[b][m][n] : 0) + S[b][m][n] for m < M, n < N; S dense with pitch
// ld_s and batch pitch M * ld_s; C with pitch ldc and batch pitch stride_c.
cudaError_t launch_i32_add_back(const int32_t* s, int ld_s, int M, int N, int batch, int32_t* c,
                                long long ldc, long long stride_c, bool accumulate,
                                cudaStream_t stream);

}  // namespace tc::cuda
