// GEMM numerics on every device against float64: odd and prime shapes, all transposes,
// alpha/beta (beta = 0 over NaN-poisoned C), padded leading dimensions, batched with strides
// and broadcast, async. Bounds: f32 1e-6, f16 5e-3, bf16 3e-3, i8 exact.
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "common/backends.h"
#include "common/gemm_case.h"
#include "common/reference.h"

namespace tc::test {
namespace {

const GemmDtypes kDtypes[] = {
    {TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32},  {TC_DTYPE_F16, TC_DTYPE_F16, TC_DTYPE_F32},
    {TC_DTYPE_F16, TC_DTYPE_F32, TC_DTYPE_F32},  {TC_DTYPE_BF16, TC_DTYPE_BF16, TC_DTYPE_F32},
    {TC_DTYPE_BF16, TC_DTYPE_F32, TC_DTYPE_F32}, {TC_DTYPE_I8, TC_DTYPE_I32, TC_DTYPE_I32},
};

class Gemm : public ::testing::TestWithParam<std::tuple<tc_device_t, int>> {
 protected:
  void SetUp() override { TC_CONTEXT_OR_SKIP(guard_, std::get<0>(GetParam())); }
  GemmDtypes dtypes() const { return kDtypes[std::get<1>(GetParam())]; }
  void check(const GemmCase& c) {
    GemmDtypes t = dtypes();
    GemmCase cc = c;
    if (t.in == TC_DTYPE_I8) {  // i8 GEMM takes alpha = 1, beta in {0, 1}
      cc.alpha = 1.0f;
      cc.beta = cc.beta == 0.0f ? 0.0f : 1.0f;
    }
    double err = run_gemm_case(guard_.ctx, cc, t, rng_);
    EXPECT_GE(err, 0.0) << describe(cc, t);
    EXPECT_LE(err, gemm_tolerance(t.in, t.out)) << describe(cc, t) << " ran " << tc_last_instance();
  }
  ContextGuard guard_;
  std::mt19937_64 rng_{uint64_t(12345 + std::get<1>(GetParam()))};
};

TEST_P(Gemm, OddShapesAllTransposes) {
  const int shapes[][3] = {{1, 1, 1},     {7, 13, 5},    {31, 37, 41},  {64, 64, 64},
                           {97, 89, 101}, {128, 1, 257}, {1, 257, 128}, {127, 131, 67}};
  for (auto& s : shapes)
    for (int t = 0; t < 4; ++t) check({s[0], s[1], s[2], bool(t & 1), bool(t & 2)});
}

TEST_P(Gemm, AlphaBetaAndNaNPoisonedC) {
  for (int t = 0; t < 4; ++t) {
    check({53, 47, 59, bool(t & 1), bool(t & 2), 0.5f, -1.5f});
    check({53, 47, 59, bool(t & 1), bool(t & 2), -2.0f, 0.0f});  // C is NaN: must not leak
    check({19, 23, 29, bool(t & 1), bool(t & 2), 1.0f, 1.0f});
  }
}

TEST_P(Gemm, PaddedLeadingDimensions) {
  for (int t = 0; t < 4; ++t) {
    check({37, 41, 43, bool(t & 1), bool(t & 2), 1.0f, 0.0f, 3});
    check({37, 41, 43, bool(t & 1), bool(t & 2), 0.75f, 0.25f, 16});
  }
}

TEST_P(Gemm, BatchedStridesAndBroadcast) {
  GemmCase c{23, 29, 31, false, true, 1.0f, 0.5f};
  c.batch = 3;
  check(c);
  c.broadcast_a = true;
  check(c);
  c.broadcast_a = false, c.broadcast_b = true, c.ta = true, c.beta = 0.0f;
  check(c);
  c.ld_pad = 5;
  check(c);
  c.use_async = true;  // tc_gemm_batched_async
  check(c);
}

TEST_P(Gemm, AsyncMatchesSync) {
  GemmCase c{61, 67, 71, true, false, 1.25f, 0.5f};
  c.use_async = true;
  check(c);
}

TEST_P(Gemm, LargerSquare) {
  check({256, 192, 320, false, false, 1.0f, 0.0f});
}

INSTANTIATE_TEST_SUITE_P(AllDevices, Gemm,
                         ::testing::Combine(::testing::ValuesIn(all_devices()),
                                            ::testing::Range(0, 6)),
                         [](const auto& info) {
                           GemmDtypes t = kDtypes[std::get<1>(info.param)];
                           return device_name(std::get<0>(info.param)) + "_" + tc_dtype_name(t.in) +
                                  "_" + tc_dtype_name(t.out);
                         });

// i8 accumulation is exact at K = 65536 with the extreme products (-128 * -128 = 2^14 each,
// 2^30 in total: the largest sum an int32 holds with margin).
class GemmI8Exact : public ::testing::TestWithParam<tc_device_t> {};

TEST_P(GemmI8Exact, K65536Extremes) {
  ContextGuard g;
  TC_CONTEXT_OR_SKIP(g, GetParam());
  const int M = 3, N = 5, K = 65536;
  std::vector<int8_t> A(size_t(M) * K, -128), B(size_t(K) * N, -128);
  std::mt19937_64 rng(7);
  for (int k = 0; k < K; k += 3) B[size_t(k) * N + 1] = int8_t(int(rng() % 256) - 128);
  A[size_t(K) + 5] = 127;  // row 1 differs
  tc_buffer_t *a, *b, *c;
  TC_ASSERT_OK(tc_buffer_alloc(g.ctx, A.size(), &a));
  TC_ASSERT_OK(tc_buffer_alloc(g.ctx, B.size(), &b));
  TC_ASSERT_OK(tc_buffer_alloc(g.ctx, M * N * 4, &c));
  TC_ASSERT_OK(tc_buffer_write(a, 0, A.data(), A.size()));
  TC_ASSERT_OK(tc_buffer_write(b, 0, B.data(), B.size()));
  tc_gemm_desc d{
      M, N, K, TC_DTYPE_I8, TC_DTYPE_I8, TC_DTYPE_I32, TC_DTYPE_I32, false, false, 1.0f, 0.0f,
      0, 0, 0};
  TC_ASSERT_OK(tc_gemm(g.ctx, &d, a, b, c));
  std::vector<int32_t> C(M * N);
  TC_ASSERT_OK(tc_buffer_read(c, 0, C.data(), C.size() * 4));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      int64_t want = 0;
      for (int k = 0; k < K; ++k) want += int64_t(A[size_t(i) * K + k]) * B[size_t(k) * N + j];
      EXPECT_EQ(C[i * N + j], want) << "C[" << i << "," << j << "] via " << tc_last_instance();
    }
  tc_buffer_free(a);
  tc_buffer_free(b);
  tc_buffer_free(c);
}

INSTANTIATE_TEST_SUITE_P(AllDevices, GemmI8Exact, ::testing::ValuesIn(all_devices()),
                         [](const auto& info) { return device_name(info.param); });

}  // namespace
}  // namespace tc::test
