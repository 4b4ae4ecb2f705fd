// The CPU 8-bit-activation GEMV core (src/cpu/gemv_quant_q8.cpp, gemv_q8_units.h) called
// directly, and the Q4_0 decode row through the public API.
//
// Core: the units read the GGUF bytes where they lie, with loads at offsets that depend on
// the weights' address (Q4_0 gathers its 8 fp16 scales with 32-byte loads and dword blends),
// so the weights are placed at every byte offset 0..63 in a buffer that ends where they end
// (ASan sees any read past them). Each output is checked against the exact dot of the same
// 8-bit activation codes with the dequantized weights, in float64: a misplaced code, nibble
// or scale is an O(1) error, float rounding ~1e-7 of the terms' absolute sum. Rows outside
// [n0, n1) must keep their NaN poison.
// API: Q4_0 with quantized activations, M = 1..33 (GEMV rows up to 8, then the GEMM row),
// odd N, K not a multiple of 256, against float64 within 5e-3; CTest reruns it with
// TC_CPU_ISA=scalar, where the scalar fallback must serve every GEMV call.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/gemv_quant_q8.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

struct Format {
  tc_dtype_t w;
  std::vector<int> ks;
};

// |y - exact| over the absolute sum of the terms, worst over outputs; checks the poison.
double core_error(tc_dtype_t w, int M, int N, int K, int offset, uint32_t seed) {
  const Weights wt = make_weights(w, N, K, seed);
  const Activations a = make_activations(TC_DTYPE_F32, M, K, seed + 1);
  // The weights at `offset` bytes into a buffer that ends with them.
  std::vector<uint8_t> buf(offset + wt.bytes.size(), 0xa5);
  std::memcpy(buf.data() + offset, wt.bytes.data(), wt.bytes.size());
  cpu::ActQ8 act, nat;  // the kernel's layout, and element order for the reference
  cpu::quantize_act_q8(a.f.data(), M, K, cpu::q8_act_layout(w), &act);
  cpu::quantize_act_q8(a.f.data(), M, K, cpu::ActLayout::natural, &nat);
  std::vector<float> y(size_t(M) * N, std::nanf(""));
  const int n0 = 1, n1 = N - 1;  // the first and last rows stay poisoned
  cpu::gemv_q8_act_rows(w, buf.data() + offset, K, act, M, y.data(), N, n0, n1);
  double worst = 0;
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      const float got = y[size_t(m) * N + n];
      if (n < n0 || n >= n1) {
        EXPECT_TRUE(std::isnan(got)) << "row " << n << " outside [n0, n1) was written";
        continue;
      }
      double exact = 0, mag = 0;
      for (int k = 0; k < K; ++k) {
        const size_t b = size_t(m) * nat.nbp + k / 32;
        const double x = double(nat.d[b]) * nat.qs[b * 32 + k % 32];
        const double t = wt.deq[size_t(n) * K + k] * x;
        exact += t;
        mag += std::fabs(t);
      }
      worst = std::max(worst, std::fabs(got - exact) / (mag + 1e-30));
    }
  }
  return worst;
}

TEST(CpuQ8Core, ExactDotAtEveryWeightAlignment) {
  if (!cpu_has_avx2()) GTEST_SKIP() << "the 8-bit-activation core needs AVX2, FMA and F16C";
  // K: one block, one group, a group and one block, 131 blocks (not a multiple of 256).
  const Format formats[] = {{TC_DTYPE_Q4_0, {32, 256, 288, 4192}},
                            {TC_DTYPE_Q8_0, {32, 256, 288, 4192}},
                            {TC_DTYPE_Q4_K, {256, 1280}}};
  uint32_t seed = 1;
  for (const Format& f : formats) {
    for (int K : f.ks) {
      for (int offset = 0; offset < 64; ++offset) {
        const int M = 1 + offset % 8;  // every M the core serves, spread over the offsets
        EXPECT_LE(core_error(f.w, M, 7, K, offset, seed += 2), 2e-6)
            << "w=" << f.w << " K=" << K << " offset=" << offset << " M=" << M;
      }
    }
  }
}

TEST(CpuQ8Core, Float64BoundOnALongRaggedRow) {
  if (!cpu_has_avx2()) GTEST_SKIP() << "the 8-bit-activation core needs AVX2, FMA and F16C";
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K}) {
    const int N = 131, K = w == TC_DTYPE_Q4_K ? 4352 : 4192;  // 17 super-blocks / 131 blocks
    const Weights wt = make_weights(w, N, K, 900 + w);
    const Activations a = make_activations(TC_DTYPE_F32, 1, K, 901 + w);
    cpu::ActQ8 act;
    cpu::quantize_act_q8(a.f.data(), 1, K, cpu::q8_act_layout(w), &act);
    std::vector<float> y(N, std::nanf(""));
    cpu::gemv_q8_act_rows(w, wt.bytes.data(), K, act, 1, y.data(), N, 0, N);
    EXPECT_LE(rms_scaled(y, reference(wt, a, 1, N, K)), 5e-3) << "w=" << w;
  }
}

TEST(CpuQ4_0Api, QuantizedActivationsM1To33) {
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CPU), TC_SUCCESS) << tc_last_error_message();
  const bool avx2 = cpu_has_avx2();
  uint32_t seed = 500;
  for (int M = 1; M <= 33; ++M) {
    for (int K : {288, 4192}) {  // 9 and 131 blocks
      const int N = 131;
      const Weights wt = make_weights(TC_DTYPE_Q4_0, N, K, seed++);
      const Activations a = make_activations(TC_DTYPE_F32, M, K, seed++);
      const tc_quant_matmul_desc d{M,    N,        K, TC_DTYPE_Q4_0, TC_DTYPE_F32, TC_DTYPE_F32,
                                   true, a.x_scale};
      std::vector<float> y;
      ASSERT_EQ(run_api(ctx.ctx, d, wt, a, tc_gemv_quantized, &y), TC_SUCCESS)
          << tc_last_error_message();
      const std::string row = tc_last_instance();
      EXPECT_LE(rms_scaled(y, reference(wt, a, M, N, K)), 5e-3) << row << " M=" << M << " K=" << K;
      if (M <= 8) {
        EXPECT_EQ(row, avx2 ? "gemv_q4_0_q8_0_avx2" : "gemv_quant_v1_scalar") << "M=" << M;
      }
    }
  }
}

}  // namespace
}  // namespace tc::quant_test
