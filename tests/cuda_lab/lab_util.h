// Helpers of the CUDA GEMM lab: error checks, device random fill, host dtype conversions,
// the float64 reference and the cuBLAS call for a row-major tc::GemmProblem.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/dispatch.h"

#define LAB_CHECK(x)                                                                           \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

namespace lab {

inline size_t dsize(tc_dtype_t t) {
  return t == TC_DTYPE_F16 || t == TC_DTYPE_BF16 ? 2 : t == TC_DTYPE_I8 ? 1 : 4;
}

// Fills n elements with values uniform in [-1, 1) (ints: [-128, 127]), from a hash of
// (seed, index): fresh inputs per case, reproducible per seed.
void fill_random(void* p, tc_dtype_t t, size_t n, uint64_t seed, cudaStream_t s = nullptr);
// Fills bytes with 0xFF: NaN for every float type, -1 for ints.
inline void poison(void* p, size_t bytes) {
  LAB_CHECK(cudaMemset(p, 0xFF, bytes));
}

inline double to_double(const void* p, tc_dtype_t t, size_t i) {
  switch (t) {
    case TC_DTYPE_F16:
      return __half2float(static_cast<const __half*>(p)[i]);
    case TC_DTYPE_BF16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case TC_DTYPE_I8:
      return static_cast<const int8_t*>(p)[i];
    case TC_DTYPE_I32:
      return static_cast<const int32_t*>(p)[i];
    default:
      return static_cast<const float*>(p)[i];
  }
}

// Host copies of one problem's operands (batch 0 .. batch-1 as strided in device memory).
struct HostMats {
  std::vector<char> a, b, c0;  // c0: C before the call (used when beta != 0)
};

// op(A)(i, k) of batch b, in double.
inline double a_at(const tc::GemmProblem& p, const HostMats& h, int b, int i, int k) {
  const auto& d = p.d;
  size_t off =
      size_t(b) * p.stride_a + (d.transpose_a ? size_t(k) * d.lda + i : size_t(i) * d.lda + k);
  return to_double(h.a.data(), d.a_dtype, off);
}
inline double b_at(const tc::GemmProblem& p, const HostMats& h, int b, int k, int j) {
  const auto& d = p.d;
  size_t off =
      size_t(b) * p.stride_b + (d.transpose_b ? size_t(j) * d.ldb + k : size_t(k) * d.ldb + j);
  return to_double(h.b.data(), d.b_dtype, off);
}

// The float64 reference of C(b, i, j).
inline double ref_at(const tc::GemmProblem& p, const HostMats& h, int b, int i, int j) {
  double s = 0;
  for (int k = 0; k < p.d.K; ++k) s += a_at(p, h, b, i, k) * b_at(p, h, b, k, j);
  double r = double(p.d.alpha) * s;
  if (p.d.beta != 0.0f)
    r += double(p.d.beta) *
         to_double(h.c0.data(), p.d.c_dtype, size_t(b) * p.stride_c + size_t(i) * p.d.ldc + j);
  return r;
}

// cuBLAS on the same row-major problem (computes C^T = op(B)^T op(A)^T column-major).
cublasStatus_t cublas_gemm(cublasHandle_t h, const tc::GemmProblem& p, void* c);

}  // namespace lab
