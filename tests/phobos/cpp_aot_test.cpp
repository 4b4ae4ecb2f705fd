// `phobosc emit --target=cpp` end to end: CMake runs phobosc at build time on three example
// instances (f32 sgemm with alpha/beta, f16 linear+GELU with dot_t and a bias broadcast, f16
// hgemm) and on tests/phobos/aot_misc.ph (reductions, tile slices, if/else, bf16/i32 casts,
// integer % and /), compiles the generated C++ into this test, and compares the functions with
// the interpreter (the CPU target) bit for bit on ragged and aligned shapes, outputs poisoned.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "phobos/phobos.h"
#include "util.h"

extern "C" {
void phobos_sgemm_ragged_TILE_M32_TILE_N64_TILE_K8_T128(float*, float*, float*, double, double,
                                                        int64_t, int64_t, int64_t);
void phobos_linear_gelu_BM64_BN64_BK32_T128(uint16_t*, uint16_t*, uint16_t*, uint16_t*, int64_t,
                                            int64_t, int64_t);
void phobos_hgemm_BM64_BN64_BK32(uint16_t*, uint16_t*, uint16_t*, int64_t, int64_t, int64_t);
void phobos_rowstats(float*, float*, uint16_t*, int32_t*, int64_t);
}

namespace {

using phobos::DType;

std::vector<float> randf(size_t n, std::mt19937& g) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(g);
  return v;
}
std::vector<uint16_t> randh(size_t n, std::mt19937& g) {
  std::vector<uint16_t> v(n);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : v) x = phobos::f32_to_f16(u(g));
  return v;
}

TEST(PhobosCppAot, SgemmRaggedEqualsInterpreter) {
  std::mt19937 g(11);
  auto k = phobos::compile(phobos_test::example("ragged.ph"), "ragged.ph").kernel("sgemm_ragged");
  phobos::LaunchOptions o;
  o.params = {{"TILE_M", 32}, {"TILE_N", 64}, {"TILE_K", 8}, {"T", 128}};
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{37, 71, 23}, {64, 128, 32}}) {
    auto A = randf(M * K, g), B = randf(K * N, g), C = randf(M * N, g);
    std::vector<float> C1 = C, C2 = C;
    k.launch({phobos::TensorView{A.data(), DType::F32, {M, K}},
              phobos::TensorView{B.data(), DType::F32, {K, N}},
              phobos::TensorView{C1.data(), DType::F32, {M, N}}, 1.25, -0.5},
             o);
    // Argument order: tensors and scalars as declared, then dims in first-use order (M, K, N).
    phobos_sgemm_ragged_TILE_M32_TILE_N64_TILE_K8_T128(A.data(), B.data(), C2.data(), 1.25, -0.5, M,
                                                       K, N);
    EXPECT_EQ(0, std::memcmp(C1.data(), C2.data(), C1.size() * 4)) << M << "x" << N << "x" << K;
    EXPECT_NE(0, std::memcmp(C.data(), C2.data(), C.size() * 4));  // it wrote something
  }
}

TEST(PhobosCppAot, LinearGeluEqualsInterpreter) {
  std::mt19937 g(12);
  auto k = phobos::compile(phobos_test::example("linear_gelu.ph"), "linear_gelu.ph")
               .kernel("linear_gelu");
  phobos::LaunchOptions o;
  o.params = {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"T", 128}};
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{29, 67, 41}, {64, 64, 64}}) {
    auto X = randh(M * K, g), W = randh(N * K, g), bias = randh(N, g);
    std::vector<uint16_t> Y1(M * N, 0x7e00), Y2(M * N, 0x7e00);  // NaN-poisoned
    k.launch({phobos::TensorView{X.data(), DType::F16, {M, K}},
              phobos::TensorView{W.data(), DType::F16, {N, K}},
              phobos::TensorView{bias.data(), DType::F16, {N}},
              phobos::TensorView{Y1.data(), DType::F16, {M, N}}},
             o);
    phobos_linear_gelu_BM64_BN64_BK32_T128(X.data(), W.data(), bias.data(), Y2.data(), M, K, N);
    EXPECT_EQ(Y1, Y2) << M << "x" << N << "x" << K;
    for (uint16_t y : Y2) ASSERT_NE(y, 0x7e00);
  }
}

TEST(PhobosCppAot, HgemmAlignedEqualsInterpreter) {
  std::mt19937 g(13);
  auto k = phobos::compile(phobos_test::example("sgemm.ph"), "sgemm.ph").kernel("hgemm");
  const int64_t M = 128, N = 64, K = 96;
  auto A = randh(M * K, g), B = randh(K * N, g);
  std::vector<uint16_t> C1(M * N, 0x7e00), C2(M * N, 0x7e00);
  phobos::LaunchOptions o;
  o.autotune = false;
  k.launch({phobos::TensorView{A.data(), DType::F16, {M, K}},
            phobos::TensorView{B.data(), DType::F16, {K, N}},
            phobos::TensorView{C1.data(), DType::F16, {M, N}}},
           o);
  phobos_hgemm_BM64_BN64_BK32(A.data(), B.data(), C2.data(), M, K, N);
  EXPECT_EQ(C1, C2);
  for (uint16_t c : C2) ASSERT_NE(c, 0x7e00);
}

TEST(PhobosCppAot, ReductionsSlicesBranchesAndIntegersEqualInterpreter) {
  std::mt19937 g(14);
  auto k = phobos::compile(phobos_test::read_file(std::string(PHOBOS_TEST_DIR) + "/aot_misc.ph"),
                           "aot_misc.ph")
               .kernel("rowstats");
  const int64_t M = 45;  // three blocks, the last one ragged
  auto X = randf(M * 32, g);
  std::vector<float> S1(M, NAN), S2(M, NAN);
  std::vector<uint16_t> Y1(M * 8, 0x7fc0), Y2(M * 8, 0x7fc0);
  std::vector<int32_t> Q1(M * 8, -999), Q2(M * 8, -999);
  k.launch({phobos::TensorView{X.data(), DType::F32, {M, 32}},
            phobos::TensorView{S1.data(), DType::F32, {M, 1}},
            phobos::TensorView{Y1.data(), DType::BF16, {M, 8}},
            phobos::TensorView{Q1.data(), DType::I32, {M, 8}}});
  phobos_rowstats(X.data(), S2.data(), Y2.data(), Q2.data(), M);
  EXPECT_EQ(0, std::memcmp(S1.data(), S2.data(), S1.size() * 4));
  EXPECT_EQ(Y1, Y2);
  EXPECT_EQ(Q1, Q2);
  for (float s : S2) ASSERT_FALSE(std::isnan(s));
  for (int32_t q : Q2) ASSERT_NE(q, -999);
}

}  // namespace
