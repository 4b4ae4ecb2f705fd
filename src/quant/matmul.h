// The quantized matmul op: Y[M,N] = X[M,K] * dequant(W[N,K])^T, its dispatch table and the CPU
// kernels that serve it (src/cpu/*quant*.cpp). The table is the fallback ladder: reading
// quant_table.cpp tells which kernel serves which problem.
#pragma once

#include <tc/tc.h>

#include <span>
#include <string>

#include "core/internal.h"

namespace tc::quant {

// A validated problem: pointers are the context's device pointers (host pointers on the CPU).
struct MatmulProblem {
  tc_quant_matmul_desc d{};
  const uint8_t* w = nullptr;       // N rows of row_bytes(w_dtype, K); I8: N*K int8
  const float* w_scales = nullptr;  // I8 weights only: N floats
  const void* x =
      nullptr;         // [M,K] of d.x_dtype: f32, f16, bf16, int8 (I8); Q8_0: M rows of K/32 blocks
  float* y = nullptr;  // [M,N] f32
  tc_context* ctx = nullptr;  // rows serve only their context's device (pick_matmul_row)
  void* stream = nullptr;     // CUDA: the cudaStream_t the row launches on
};

struct MatmulRow {
  tc_backend_t backend;
  const char* name;
  bool (*can_run)(const MatmulProblem& p, std::string& why);
  tc_status_t (*run)(const MatmulProblem& p);
};

std::span<const MatmulRow> matmul_table();
// The row for `p` among the rows of its context's device (CUDA/cuBLASLt rows on a CUDA
// context, the others on the CPU): TC_Q4_USE_V1=1 forces that device's v1 row (its last), else
// the first that can run. Returns nullptr with the error message set when none can.
const MatmulRow* pick_matmul_row(const MatmulProblem& p);

// Whether the CPU has AVX2, FMA and F16C (CPUID, capped by TC_CPU_ISA).
bool cpu_has_avx2();

}  // namespace tc::quant

namespace tc::cpu {
// Decode GEMV, M <= 8, f32 activations quantized on the fly to 8 bits (gemv_quant_q8.cpp).
tc_status_t gemv_q4_0_q8_0_avx2(const quant::MatmulProblem& p);
tc_status_t gemv_q8_0_q8_0_avx2(const quant::MatmulProblem& p);
tc_status_t gemv_q4_k_q8_0_avx2(const quant::MatmulProblem& p);
// Decode GEMV, M <= 8, f32 activations kept f32: each block is dequantized into an L1 tile
// and dotted with every activation row (gemv_quant.cpp). All block formats.
tc_status_t gemv_block_f32_avx2(const quant::MatmulProblem& p);
// Int8 weights with a per-row f32 scale, M <= 8, x f32 or int8 (gemv_quant_i8.cpp).
tc_status_t gemv_i8_f32_avx2(const quant::MatmulProblem& p);
tc_status_t gemv_i8_i8_avx2(const quant::MatmulProblem& p);
// Any M: dequantize panels of W to f32 and multiply with OpenBLAS sgemm (gemm_quant.cpp).
tc_status_t gemm_dequant_panel_sgemm(const quant::MatmulProblem& p);
// v1: the simple scalar kernel, any format and M (gemv_quant_v1.cpp). Also the fallback on
// CPUs without AVX2.
tc_status_t gemv_quant_v1(const quant::MatmulProblem& p);
}  // namespace tc::cpu
