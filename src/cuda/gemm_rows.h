// The CUDA rows of the GEMM dispatch table (expanded by core/gemm_table.cpp before the CPU rows).
// The static ladder, used as is under TC_AUTOTUNE=0 and otherwise the list of candidates that
// the autotuner times on the first call of a problem class:
//   1. tc's own kernels, each row present when its family is built (src/cuda/CMakeLists.txt
//      defines TC_CUDA_HAVE_GEMM_<FAMILY> from kernels.cmake): the M <= 16 decode kernel first
//      (it streams the weights; it declines other shapes), then sm_90a wgmma + TMA, then
//      mma.sync for other GPUs and TMA-illegal cases, then exact f32 as 3xTF32 on sm_90a
//      tensor cores (gemm_tf32x3, error ~3e-7 rms), then f32 with accum TF32 on the own 1-pass
//      TF32 kernel (gemm_tf32_own, gemm_tf32.h; slower than cuBLASLt's TF32, so it declines
//      unless TC_TF32_OWN=1; with it the autotuner times it against gemm_cublaslt_tf32), then
//      exact-f32 SIMT (gemm_simt);
//   2. cuBLASLt, one row per input dtype, which together serve every combination the API
//      accepts, so every valid call has a CUDA row.
// No CUDA type appears here: gemm_table.cpp is compiled by the C++ compiler alone.
#pragma once

#include <string>

#include "core/dispatch.h"

namespace tc::cuda {

bool wgmma_can_run(const GemmProblem& p, std::string& why);
tc_status_t wgmma_run(const GemmProblem& p);
bool mma_can_run(const GemmProblem& p, std::string& why);
tc_status_t mma_run(const GemmProblem& p);
bool skinny_can_run(const GemmProblem& p, std::string& why);
tc_status_t skinny_run(const GemmProblem& p);
bool tf32x3_can_run(const GemmProblem& p, std::string& why);
tc_status_t tf32x3_run(const GemmProblem& p);
bool tf32_own_can_run(const GemmProblem& p, std::string& why);
tc_status_t tf32_own_run(const GemmProblem& p);
bool f32_can_run(const GemmProblem& p, std::string& why);
tc_status_t f32_run(const GemmProblem& p);

bool cublaslt_f32_can_run(const GemmProblem& p, std::string& why);
bool cublaslt_tf32_can_run(const GemmProblem& p, std::string& why);
bool cublaslt_f16_can_run(const GemmProblem& p, std::string& why);
bool cublaslt_bf16_can_run(const GemmProblem& p, std::string& why);
bool cublaslt_i8_can_run(const GemmProblem& p, std::string& why);
tc_status_t cublaslt_run(const GemmProblem& p);
// How many heuristic algorithms cuBLASLt offers for p (the autotuner's variants of its rows).
int cublaslt_variants(const GemmProblem& p);

}  // namespace tc::cuda

// clang-format off
#ifdef TC_CUDA_HAVE_GEMM_SKINNY
#define TC_CUDA_ROW_SKINNY {TC_BACKEND_CUDA, "gemm_skinny", cuda::skinny_can_run, cuda::skinny_run},
#else
#define TC_CUDA_ROW_SKINNY
#endif
#ifdef TC_CUDA_HAVE_GEMM_WGMMA
#define TC_CUDA_ROW_WGMMA {TC_BACKEND_CUDA, "gemm_wgmma", cuda::wgmma_can_run, cuda::wgmma_run},
#else
#define TC_CUDA_ROW_WGMMA
#endif
#ifdef TC_CUDA_HAVE_GEMM_MMA
#define TC_CUDA_ROW_MMA {TC_BACKEND_CUDA, "gemm_mma", cuda::mma_can_run, cuda::mma_run},
#else
#define TC_CUDA_ROW_MMA
#endif
#ifdef TC_CUDA_HAVE_GEMM_TF32X3
#define TC_CUDA_ROW_TF32X3 {TC_BACKEND_CUDA, "gemm_tf32x3", cuda::tf32x3_can_run, cuda::tf32x3_run},
// The 1-pass TF32 kernel (accum TF32 only) lives in gemm_tf32x3.cu: same family switch. Off
// unless TC_TF32_OWN=1 (it measured slower than cuBLASLt's TF32).
#define TC_CUDA_ROW_TF32 {TC_BACKEND_CUDA, "gemm_tf32_own", cuda::tf32_own_can_run, cuda::tf32_own_run},
#else
#define TC_CUDA_ROW_TF32X3
#define TC_CUDA_ROW_TF32
#endif
#ifdef TC_CUDA_HAVE_GEMM_F32
#define TC_CUDA_ROW_F32 {TC_BACKEND_CUDA, "gemm_simt", cuda::f32_can_run, cuda::f32_run},
#else
#define TC_CUDA_ROW_F32
#endif

#define TC_CUDA_ROWS_CUBLASLT                                                                      \
  {TC_BACKEND_CUBLASLT, "gemm_cublaslt_f32", cuda::cublaslt_f32_can_run, cuda::cublaslt_run},     \
  {TC_BACKEND_CUBLASLT, "gemm_cublaslt_tf32", cuda::cublaslt_tf32_can_run, cuda::cublaslt_run},   \
  {TC_BACKEND_CUBLASLT, "gemm_cublaslt_f16", cuda::cublaslt_f16_can_run, cuda::cublaslt_run},     \
  {TC_BACKEND_CUBLASLT, "gemm_cublaslt_bf16", cuda::cublaslt_bf16_can_run, cuda::cublaslt_run},   \
  {TC_BACKEND_CUBLASLT, "gemm_cublaslt_i8", cuda::cublaslt_i8_can_run, cuda::cublaslt_run},

// Own kernels report their planned instance (e.g. gemm_wgmma_bf16_f32_nt_bm128_bn256_bk64_s4_
// aligned) through tc_last_instance(); the row names here are the families.
#define TC_CUDA_GEMM_ROWS \
  TC_CUDA_ROW_SKINNY TC_CUDA_ROW_WGMMA TC_CUDA_ROW_MMA TC_CUDA_ROW_TF32X3 TC_CUDA_ROW_TF32 \
  TC_CUDA_ROW_F32 \
  TC_CUDA_ROWS_CUBLASLT
// clang-format on
