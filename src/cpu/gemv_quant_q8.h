// The single-threaded core of the 8-bit-activation GEMV (gemv_quant_q8.cpp), exposed for the
// in-cache benchmark (tests/quant/bench_q8_hot.cpp), which times it on one or two pinned
// threads without the thread pool.
#pragma once

#include <tc/tc.h>

#include "cpu/quant_act.h"

namespace tc::cpu {

// The activation layout the kernel of weight format w reads.
ActLayout q8_act_layout(tc_dtype_t w);
// y[m*ldy + n] = sum_k dequant(W[n, k]) * x[m, k] for n in [n0, n1), m < M (1..8), with x the
// activations quantized by quantize_act_q8(..., q8_act_layout(w), &a). W: GGUF rows of K
// values (Q4_0, Q8_0 or Q4_K).
void gemv_q8_act_rows(tc_dtype_t w, const uint8_t* W, int64_t K, const ActQ8& a, int M, float* y,
                      int64_t ldy, int64_t n0, int64_t n1);

}  // namespace tc::cpu
