// Device-side helpers of the lab and the cuBLAS call (see lab_util.h).
#include <type_traits>

#include "cuda/cuda_types.h"
#include "lab_util.h"

namespace lab {

__device__ inline uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
__global__ void fill_kernel(T* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t r = mix(seed * 0x100000001B3ull + i);
    if constexpr (std::is_integral_v<T>) {
      p[i] = T(int(r & 0xFF) - 128);
    } else {
      const float u = float(r >> 40) * (2.0f / 16777216.0f) - 1.0f;
      p[i] = T(u);
    }
  }
}

void fill_random(void* p, tc_dtype_t t, size_t n, uint64_t seed, cudaStream_t s) {
  const int grid = 132 * 8, block = 256;
  switch (t) {
    case TC_DTYPE_F16:
      fill_kernel<<<grid, block, 0, s>>>(static_cast<__half*>(p), n, seed);
      break;
    case TC_DTYPE_BF16:
      fill_kernel<<<grid, block, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed);
      break;
    case TC_DTYPE_I8:
      fill_kernel<<<grid, block, 0, s>>>(static_cast<int8_t*>(p), n, seed);
      break;
    case TC_DTYPE_I32:
      fill_kernel<<<grid, block, 0, s>>>(static_cast<int32_t*>(p), n, seed);
      break;
    default:
      fill_kernel<<<grid, block, 0, s>>>(static_cast<float*>(p), n, seed);
      break;
  }
  LAB_CHECK(cudaGetLastError());
}

cublasStatus_t cublas_gemm(cublasHandle_t h, const tc::GemmProblem& p, void* c) {
  const auto& d = p.d;
  cublasSetStream(h, static_cast<cudaStream_t>(p.stream));
  const bool i8 = d.a_dtype == TC_DTYPE_I8;
  const bool f32 = d.a_dtype == TC_DTYPE_F32;
  cublasComputeType_t ct =
      i8    ? CUBLAS_COMPUTE_32I
      : f32 ? (d.accum_dtype == TC_DTYPE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F)
            : CUBLAS_COMPUTE_32F;
  int32_t ia = 1, ib = int32_t(d.beta);
  const void* alpha = i8 ? static_cast<const void*>(&ia) : &d.alpha;
  const void* beta = i8 ? static_cast<const void*>(&ib) : &d.beta;
  const cublasOperation_t opa = d.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLAS "A" = B
  const cublasOperation_t opb = d.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (p.batch > 1)
    return cublasGemmStridedBatchedEx(
        h, opa, opb, d.N, d.M, d.K, alpha, p.b, tc::cuda::cuda_data_type(d.b_dtype), d.ldb,
        p.stride_b, p.a, tc::cuda::cuda_data_type(d.a_dtype), d.lda, p.stride_a, beta, c,
        tc::cuda::cuda_data_type(d.c_dtype), d.ldc, p.stride_c, p.batch, ct, CUBLAS_GEMM_DEFAULT);
  return cublasGemmEx(h, opa, opb, d.N, d.M, d.K, alpha, p.b, tc::cuda::cuda_data_type(d.b_dtype),
                      d.ldb, p.a, tc::cuda::cuda_data_type(d.a_dtype), d.lda, beta, c,
                      tc::cuda::cuda_data_type(d.c_dtype), d.ldc, ct, CUBLAS_GEMM_DEFAULT);
}

}  // namespace lab
