// Launch plumbing shared by the quantized kernels' .cu files.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/quant_dequant.cuh"
#include "cuda/quant_kernels.h"

namespace tc::cuda {
tc_status_t cuda_fail(cudaError_t e, const char* what);  // device.cpp
}

namespace tc::cuda::quant {

inline tc_status_t launched(const char* what) {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? TC_SUCCESS : cuda_fail(e, what);
}

inline int format_code(tc_dtype_t t) {
  switch (t) {
    case TC_DTYPE_Q4_0:
      return 0;
    case TC_DTYPE_Q8_0:
      return 1;
    case TC_DTYPE_Q4_K:
      return 2;
    case TC_DTYPE_Q6_K:
      return 3;
    default:
      return -1;  // I8
  }
}

// Calls f(std::integral_constant<int, FMT>{}) for weight format t among the three the GEMV and
// MMA kernels serve (Q4_0, Q8_0, else Q4_K): the one format switch of every launcher.
template <class F>
decltype(auto) with_format(tc_dtype_t t, F&& f) {
  switch (t) {
    case TC_DTYPE_Q4_0:
      return f(std::integral_constant<int, kQ4_0>{});
    case TC_DTYPE_Q8_0:
      return f(std::integral_constant<int, kQ8_0>{});
    default:
      return f(std::integral_constant<int, kQ4_K>{});
  }
}

inline size_t w_row_bytes(const Args& a) {
  switch (a.w_dtype) {
    case TC_DTYPE_Q4_0:
      return size_t(a.K) / 32 * 18;
    case TC_DTYPE_Q8_0:
      return size_t(a.K) / 32 * 34;
    case TC_DTYPE_Q4_K:
      return size_t(a.K) / 256 * 144;
    case TC_DTYPE_Q6_K:
      return size_t(a.K) / 256 * 210;
    default:
      return size_t(a.K);
  }
}

// X of a kind the 8-bit-activation decode kernels read (XKind: f32, f16, bf16).
inline bool x_kind_ok(const Args& a, std::string& why) {
  if (x_kind(a.x_dtype) >= 0) return true;
  why = std::string("x_dtype ") + tc_dtype_name(a.x_dtype) + ": X must be f32, f16 or bf16";
  return false;
}
// What the batched-decode kernels (quant_mma_bulk.cu, quant_mma_f16.cu, quant_mma_b32*) ask of
// the problem: X f32, f16 or bf16, Q4_0 / Q8_0 / Q4_K, M 1..32, rows of whole 16-byte lines
// (K % 256 == 0).
inline bool bulk_mma_problem_ok(const Args& a, std::string& why) {
  if (!x_kind_ok(a, why)) return false;
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q8_0 && a.w_dtype != TC_DTYPE_Q4_K)
    return (why = "formats Q4_0, Q8_0, Q4_K only", false);
  if (a.M < 1 || a.M > 32) return (why = "M > 32", false);
  if (a.K % 256 != 0) return (why = "K % 256 != 0 (rows not a multiple of 16 bytes)", false);
  return true;
}
// A workspace of at least `need` bytes (for `what`; none if 0), W, X and it 16-byte aligned.
inline bool bulk_mma_buffers_ok(const Args& a, size_t need, const char* what, std::string& why) {
  if (need > 0 && (a.work == nullptr || a.work_bytes < need))
    return (why = std::string("no workspace for ") + what, false);
  const auto align = reinterpret_cast<uintptr_t>(a.w) | reinterpret_cast<uintptr_t>(a.x) |
                     reinterpret_cast<uintptr_t>(a.work);
  if (align % 16 != 0) return (why = "W, X or the workspace not 16-byte aligned", false);
  return true;
}

// Multiprocessors of the current device (cached per ordinal).
int sm_count();
// CTAs of `kernel` that fit on one SM with this block size and dynamic shared memory, at
// least 1; cached per (kernel, threads, smem, device) so that launches (and graph captures)
// ask the runtime once.
int blocks_per_sm(const void* kernel, int threads, size_t smem);
// Clusters of `cluster` CTAs of `kernel` (this block size and dynamic shared memory) that can be
// resident at once (GPCs hold whole clusters), at least 1; asked once per kernel and device.
int resident_clusters(const void* kernel, int cluster, int threads, size_t smem);
// Lets `kernel` use up to `max_smem` bytes of dynamic shared memory on the current device
// (once per kernel and device).
tc_status_t allow_smem(const void* kernel, size_t max_smem);

}  // namespace tc::cuda::quant
