// The int8 ping-pong kernel through the public API (companion of test_gemm_s8_pingpong.cu,
// which launches it directly): every transpose (the planner packs non-K-major s8 operands to
// K-major first), an odd shape on 128 x 128 tiles, beta 0 and 1, with TC_S8_PINGPONG forced on
// and off; results exact against an integer reference and equal in both runs. libtc's own copy
// of the launch counter is not visible here, so that the kernel ran is checked by the direct
// test; here the planner's instance name must be the 128 x 128 s8 tile.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/backends.h"
#include "cuda_test_util.h"

namespace tc::test {
namespace {

TEST(S8PingPongApi, TransposesExact) {
  ContextGuard g;
  TC_CONTEXT_OR_SKIP(g, TC_DEVICE_CUDA);
  if (!context_is_sm90a(g.ctx)) GTEST_SKIP() << "needs sm_90a";
  ScopedEnv row("TC_GEMM_ROW", "gemm_wgmma");
  ScopedEnv tune("TC_AUTOTUNE", "0");
  std::mt19937_64 rng(7);
  for (int t = 0; t < 4; ++t)
    for (int beta = 0; beta < 2; ++beta) {
      tc_gemm_desc d{};
      d.M = 131, d.N = 389, d.K = 259;
      d.a_dtype = d.b_dtype = TC_DTYPE_I8, d.c_dtype = d.accum_dtype = TC_DTYPE_I32;
      d.transpose_a = t & 1, d.transpose_b = t >> 1;
      d.alpha = 1.0f, d.beta = float(beta);
      d.lda = d.transpose_a ? d.M : d.K, d.ldb = d.transpose_b ? d.K : d.N, d.ldc = d.N;
      const GemmInputs in = make_inputs(d, 1, rng());
      std::vector<int32_t> want(size_t(d.M) * d.N);
      const auto* A = reinterpret_cast<const int8_t*>(in.a.data());
      const auto* B = reinterpret_cast<const int8_t*>(in.b.data());
      const auto* C = reinterpret_cast<const int32_t*>(in.c.data());
      for (int i = 0; i < d.M; ++i)
        for (int j = 0; j < d.N; ++j) {
          int32_t s = beta ? C[i * d.N + j] : 0;
          for (int k = 0; k < d.K; ++k)
            s += int32_t(A[d.transpose_a ? k * d.lda + i : i * d.lda + k]) *
                 B[d.transpose_b ? j * d.ldb + k : k * d.ldb + j];
          want[size_t(i) * d.N + j] = s;
        }
      for (const char* knob : {"1", "0"}) {
        ScopedEnv env("TC_S8_PINGPONG", knob);
        const RunResult r = run_gemm_bytes(g.ctx, in);
        ASSERT_EQ(r.status, TC_SUCCESS) << r.message;
        EXPECT_NE(r.instance.find("s8_s32"), std::string::npos) << r.instance;
        EXPECT_NE(r.instance.find("_bn128_"), std::string::npos) << r.instance;
        EXPECT_EQ(std::memcmp(r.c.data(), want.data(), want.size() * 4), 0)
            << "transposes " << t << " beta " << beta << " knob " << knob << " " << r.instance;
      }
    }
}

}  // namespace
}  // namespace tc::test
