// Every CUDA row of the quantized matmul table through the public API on a CUDA context,
// against float64 of the dequantized weights: ragged shapes (odd N, K with group tails, K too
// large for the GEMV's shared-memory X), M = 1..33 for decode and 64/65 for prefill, outputs
// poisoned with NaN; 8-bit activation rows (*_q8_*) within 5e-3, f16 temporaries 1e-3, the rest
// 1e-4. The row that served each call is read back with tc_last_instance(); the
// test checks which rows served which formats. CTest reruns it with TC_Q4_USE_V1=1 (every call
// must be the CUDA v1 row). Skips with "no CUDA device" where none is usable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

struct Case {
  tc_dtype_t w, x;
  bool act8;
  int M, N, K;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int M : {1, 2, 3, 5, 8, 9, 16, 17, 32, 33}) {
    for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0}) {
      for (int K : {32, 288, 1056, 14336}) out.push_back({w, TC_DTYPE_F32, false, M, 37, K});
    }
    for (tc_dtype_t w : {TC_DTYPE_Q4_K, TC_DTYPE_Q6_K}) {
      for (int K : {256, 1280}) out.push_back({w, TC_DTYPE_F32, false, M, 19, K});
    }
    // 8-bit activations allowed: the q8 GEMV for M <= 8 (N = 131 keeps the estimate of its
    // ~4e-3 statistical error within ~10%), the exact rows beyond.
    for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0}) {
      for (int K : {288, 1056}) out.push_back({w, TC_DTYPE_F32, true, M, 131, K});
    }
    out.push_back({TC_DTYPE_Q4_K, TC_DTYPE_F32, true, M, 131, 1280});
    // Rows 16-byte aligned (K % 256 == 0): the bulk q8 GEMV (M <= 2), the f16 MMA (M 3..32).
    out.push_back({TC_DTYPE_Q4_0, TC_DTYPE_F32, true, M, 131, 1024});
    out.push_back({TC_DTYPE_Q8_0, TC_DTYPE_F32, true, M, 131, 1024});
    for (int K : {17, 1000, 1024}) {
      out.push_back({TC_DTYPE_I8, TC_DTYPE_F32, false, M, 23, K});
      out.push_back({TC_DTYPE_I8, TC_DTYPE_I8, false, M, 23, K});
    }
  }
  // Prefill: f16 temporaries where 8-bit-class error is allowed, f32 otherwise.
  for (int M : {64, 65}) {
    for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K, TC_DTYPE_Q6_K}) {
      const int K = (w == TC_DTYPE_Q4_K || w == TC_DTYPE_Q6_K) ? 512 : 544;
      out.push_back({w, TC_DTYPE_F32, true, M, 131, K});
      out.push_back({w, TC_DTYPE_F32, false, M, 37, K});
    }
    out.push_back({TC_DTYPE_I8, TC_DTYPE_I8, true, M, 23, 1000});
    out.push_back({TC_DTYPE_Q4_0, TC_DTYPE_F32, true, M, 131, 768});  // the fused Q4_0 GEMM
  }
  return out;
}

bool have_cuda() {
  return tc_device_available(TC_DEVICE_CUDA);
}

std::string family(const std::string& row) {  // "cuda_prefill_..._gemm+gemm_wgmma" -> prefix
  return row.substr(0, row.find('+'));
}

TEST(QuantCuda, EveryRowMatchesFloat64) {
  if (!have_cuda()) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  std::map<std::string, std::set<int>> ran;
  uint32_t seed = 400;
  for (const Case& c : cases()) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    const Activations a = make_activations(c.x, c.M, c.K, seed++);
    const std::vector<double> ref = reference(wt, a, c.M, c.N, c.K);
    std::vector<float> y;
    const tc_quant_matmul_desc d{c.M, c.N, c.K, c.w, c.x, TC_DTYPE_F32, c.act8, a.x_scale};
    ASSERT_EQ(run_api(ctx.ctx, d, wt, a, c.M % 2 ? tc_gemv_quantized : tc_gemm_quantized, &y),
              TC_SUCCESS)
        << tc_last_error_message() << " w=" << c.w << " M=" << c.M << " K=" << c.K;
    EXPECT_EQ(tc_last_backend(), TC_BACKEND_CUDA);
    const std::string row = family(tc_last_instance());
    // f16 temporaries round weights and activations to 11 bits: ~3e-4 expected.
    const double bound = row.find("_q8_") != std::string::npos  ? 5e-3
                         : row.find("f16") != std::string::npos ? 1e-3
                                                                : 1e-4;
    EXPECT_LE(rms_scaled(y, ref), bound)
        << tc_last_instance() << " w=" << c.w << " x=" << c.x << " act8=" << c.act8 << " M=" << c.M
        << " N=" << c.N << " K=" << c.K;
    ran[row].insert(c.w);
  }
  std::string all;
  for (const auto& [row, fmts] : ran) all += row + " ";
  if (const char* want = std::getenv("TC_EXPECT_ROW")) {  // TC_Q4_USE_V1=1 run
    EXPECT_EQ(ran.size(), 1u) << all;
    EXPECT_EQ(ran.count(want), 1u) << all;
    return;
  }
  auto expect = [&](const char* row, std::set<int> fmts) {
    EXPECT_EQ(ran[row], fmts) << row << " (rows that ran: " << all << ")";
  };
  const std::set<int> fast = {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K};
  // K % 256 == 0: M <= 2 the bulk GEMV, M 3..8 the f16 MMA (these shapes are small; larger ones
  // may take the b32 kernel from M = 3: test_quant_cuda_b32), M 9..32 the b32 wgmma kernel (Q8_0
  // there on the int8 MMA with TC_QUANT_B32_Q8=0: test_quant_cuda_b32);
  // the staged q8 GEMV behind them and the q8 GEMV on Q4_K are checked in
  // test_quant_cuda_launchers, the f16 MMA's edge cases in test_quant_cuda_mma_f16.
  expect("cuda_gemv_bulk_q8_dp4a", fast);
  expect("cuda_mma_bulk_f16_hmma", fast);  // M 3..8
  expect("cuda_mma_b32_f16_wgmma", fast);  // M 9..32
  expect("cuda_gemv_q8_dp4a", {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0});
  expect("cuda_gemv_staged_f32", {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0});  // M = 1, K = 14336
  expect("cuda_gemv_quant_f32", fast);
  expect("cuda_mma_quant_batch", fast);  // M 9..32, and M <= 8 with K = 14336
  expect("cuda_gemv_i8", {TC_DTYPE_I8});
  expect("cuda_prefill_q4_f16_wgmma", {TC_DTYPE_Q4_0, TC_DTYPE_Q4_K});  // K % 256 == 0
  expect("cuda_prefill_dequant_f16_gemm",
         {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q6_K, TC_DTYPE_I8});
  expect("cuda_prefill_dequant_f32_gemm",
         {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K, TC_DTYPE_Q6_K, TC_DTYPE_I8});
  expect("cuda_quant_v1", {TC_DTYPE_Q6_K, TC_DTYPE_I8});  // M <= 8 Q6_K; I8 with K % 16 != 0
}

// Bad arguments on a CUDA context are refused before anything runs, as on the CPU.
TEST(QuantCuda, RejectsBadArguments) {
  if (!have_cuda()) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS);
  const Weights wt = make_weights(TC_DTYPE_Q4_0, 8, 64, 1);
  const Activations a = make_activations(TC_DTYPE_F32, 1, 64, 2);
  std::vector<float> y;
  tc_quant_matmul_desc d{1, 8, 48, TC_DTYPE_Q4_0, TC_DTYPE_F32, TC_DTYPE_F32, false, 0};
  EXPECT_EQ(run_api(ctx.ctx, d, wt, a, tc_gemv_quantized, &y), TC_ERROR_INVALID_SHAPE);
  EXPECT_NE(std::string(tc_last_error_message()).find("K = 48"), std::string::npos)
      << tc_last_error_message();
}

}  // namespace
}  // namespace tc::quant_test
