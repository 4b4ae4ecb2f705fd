// The CUDA rows of the quantized matmul table (src/quant/quant_table.cpp puts them above the
// CPU rows when TC_CUDA_HAVE_QUANT is defined, i.e. when src/cuda/quant.cmake is built). No
// CUDA type here: quant_table.cpp is plain C++.
#pragma once

#include <string>

#include "quant/matmul.h"

namespace tc::cuda::quant_rows {

bool gemv_bulk_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t gemv_bulk_run(const tc::quant::MatmulProblem& p);
bool mma_f16_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t mma_f16_run(const tc::quant::MatmulProblem& p);
bool mma_bulk_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t mma_bulk_run(const tc::quant::MatmulProblem& p);
bool gemv_staged_q8_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t gemv_staged_q8_run(const tc::quant::MatmulProblem& p);
bool gemv_q8_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t gemv_q8_run(const tc::quant::MatmulProblem& p);
bool gemv_staged_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t gemv_staged_run(const tc::quant::MatmulProblem& p);
bool gemv_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t gemv_run(const tc::quant::MatmulProblem& p);
bool i8_gemv_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t i8_gemv_run(const tc::quant::MatmulProblem& p);
bool mma_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t mma_run(const tc::quant::MatmulProblem& p);
// Prefill: W and X expanded to dense f16 (only when quantize_activations allows the f16
// rounding) or f32, then tc's own CUDA GEMM through the GEMM table.
bool prefill_q4_wgmma_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t prefill_q4_wgmma_run(const tc::quant::MatmulProblem& p);
bool prefill_f16_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t prefill_f16_run(const tc::quant::MatmulProblem& p);
bool prefill_f32_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t prefill_f32_run(const tc::quant::MatmulProblem& p);
bool v1_can_run(const tc::quant::MatmulProblem& p, std::string& why);
tc_status_t v1_run(const tc::quant::MatmulProblem& p);

// Activations that are not f32 (f16, bf16, Q8_0 blocks; not a table row) for `row`, picked for
// f32 X: the 8-bit-activation rows whose kernels read such X themselves run on it as it is (half
// X: the bulk GEMV, the MMA rows where their launchers accept it; Q8_0 X: the bulk GEMV, which
// dots its codes); for any other row X is widened (half) or dequantized (Q8_0) to f32 on
// p.stream first. That f32 X sits in the stream's workspace beside the row's own scratch (no
// allocation, no wait: queued and capturable like the f32 call), except for the two
// dequantize-then-GEMM prefill rows, which allocate and wait anyway.
tc_status_t run_converted_x(const tc::quant::MatmulProblem& p, const tc::quant::MatmulRow* row);

}  // namespace tc::cuda::quant_rows

// clang-format off
#define TC_QUANT_CUDA_ROWS                                                                         \
  {TC_BACKEND_CUDA, "cuda_gemv_bulk_q8_dp4a", cuda::quant_rows::gemv_bulk_can_run,              \
   cuda::quant_rows::gemv_bulk_run},                                                              \
  {TC_BACKEND_CUDA, "cuda_mma_bulk_f16_hmma", cuda::quant_rows::mma_f16_can_run,               \
   cuda::quant_rows::mma_f16_run},                                                                \
  {TC_BACKEND_CUDA, "cuda_mma_bulk_q8_i8mma", cuda::quant_rows::mma_bulk_can_run,               \
   cuda::quant_rows::mma_bulk_run},                                                               \
  {TC_BACKEND_CUDA, "cuda_gemv_staged_q8_dp4a", cuda::quant_rows::gemv_staged_q8_can_run,       \
   cuda::quant_rows::gemv_staged_q8_run},                                                         \
  {TC_BACKEND_CUDA, "cuda_gemv_q8_dp4a", cuda::quant_rows::gemv_q8_can_run,                     \
   cuda::quant_rows::gemv_q8_run},                                                                \
  {TC_BACKEND_CUDA, "cuda_gemv_staged_f32", cuda::quant_rows::gemv_staged_can_run,               \
   cuda::quant_rows::gemv_staged_run},                                                            \
  {TC_BACKEND_CUDA, "cuda_gemv_quant_f32", cuda::quant_rows::gemv_can_run,                       \
   cuda::quant_rows::gemv_run},                                                                   \
  {TC_BACKEND_CUDA, "cuda_gemv_i8", cuda::quant_rows::i8_gemv_can_run,                           \
   cuda::quant_rows::i8_gemv_run},                                                                \
  {TC_BACKEND_CUDA, "cuda_mma_quant_batch", cuda::quant_rows::mma_can_run,                       \
   cuda::quant_rows::mma_run},                                                                    \
  {TC_BACKEND_CUDA, "cuda_prefill_q4_f16_wgmma", cuda::quant_rows::prefill_q4_wgmma_can_run,    \
   cuda::quant_rows::prefill_q4_wgmma_run},                                                       \
  {TC_BACKEND_CUDA, "cuda_prefill_dequant_f16_gemm", cuda::quant_rows::prefill_f16_can_run,      \
   cuda::quant_rows::prefill_f16_run},                                                            \
  {TC_BACKEND_CUDA, "cuda_prefill_dequant_f32_gemm", cuda::quant_rows::prefill_f32_can_run,      \
   cuda::quant_rows::prefill_f32_run},                                                            \
  {TC_BACKEND_CUDA, "cuda_quant_v1", cuda::quant_rows::v1_can_run, cuda::quant_rows::v1_run},
// clang-format on
