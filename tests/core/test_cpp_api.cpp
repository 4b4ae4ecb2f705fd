// The C++ API (tc.hpp) on every device: RAII handles, typed buffers, a GEMM synchronous and on
// a stream against float64, and bad arguments raised as tc::Error with the C API's status and
// message (nothing written).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <tc/tc.hpp>
#include <vector>

#include "common/backends.h"

namespace tc::test {
namespace {

class CppApi : public ::testing::TestWithParam<tc_device_t> {
 protected:
  void SetUp() override {
    const std::string why = device_unavailable_reason(GetParam());
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// C[M,N] = A[M,K] B[K,N] in float64, row-major.
std::vector<double> reference(const std::vector<float>& a, const std::vector<float>& b, int M,
                              int N, int K) {
  std::vector<double> c(size_t(M) * N, 0.0);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k)
      for (int n = 0; n < N; ++n)
        c[size_t(m) * N + n] += double(a[size_t(m) * K + k]) * b[size_t(k) * N + n];
  return c;
}

double rms_scaled(const std::vector<float>& y, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    num += (y[i] - ref[i]) * (y[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num) / (std::sqrt(den) + 1e-30);
}

TEST_P(CppApi, HandlesBuffersAndInfo) {
  tc::Context ctx(GetParam());
  EXPECT_EQ(ctx.info().device, GetParam());
  const std::vector<int32_t> in = {1, -2, 3, 1 << 30, -7};
  tc::Buffer b = tc::Buffer::from<int32_t>(ctx, in);
  EXPECT_EQ(b.size(), in.size() * 4);
  EXPECT_EQ(b.to_vector<int32_t>(), in);
  tc::Buffer moved = std::move(b);
  EXPECT_EQ(b.get(), nullptr);
  EXPECT_EQ(moved.to_vector<int32_t>(), in);
  // A typed view exists exactly where the memory is host-visible.
  EXPECT_EQ(moved.view<int32_t>().empty(), GetParam() == TC_DEVICE_CUDA);
  ctx.trim();
}

TEST_P(CppApi, GemmSyncAndOnAStreamMatchFloat64) {
  tc::Context ctx(GetParam());
  const int M = 37, N = 29, K = 53;
  const auto a = random_floats(size_t(M) * K, 1), b = random_floats(size_t(K) * N, 2);
  const std::vector<double> ref = reference(a, b, M, N, K);
  tc::Buffer A = tc::Buffer::from<float>(ctx, a), B = tc::Buffer::from<float>(ctx, b);
  const std::vector<float> poison(size_t(M) * N, std::nanf(""));
  tc::Buffer C = tc::Buffer::from<float>(ctx, poison), C2 = tc::Buffer::from<float>(ctx, poison);
  const tc_gemm_desc d = tc::gemm_desc(M, N, K);
  tc::gemm(ctx, d, A, B, C);
  EXPECT_FALSE(tc::last_instance().empty());
  EXPECT_LE(rms_scaled(C.to_vector<float>(), ref), 1e-6) << tc::last_instance();
  tc::Stream s(ctx);
  s.gemm(d, A, B, C2);
  s.sync();
  EXPECT_LE(rms_scaled(C2.to_vector<float>(), ref), 1e-6) << tc::last_instance();
}

TEST_P(CppApi, BadArgumentsThrowTheStatusAndWriteNothing) {
  tc::Context ctx(GetParam());
  const std::vector<float> marks(16, 5.0f);
  tc::Buffer A(ctx, 64), B(ctx, 64), C = tc::Buffer::from<float>(ctx, marks);
  tc_gemm_desc d = tc::gemm_desc(4, 4, 4);
  d.M = -4;
  try {
    tc::gemm(ctx, d, A, B, C);
    ADD_FAILURE() << "no exception";
  } catch (const tc::Error& e) {
    EXPECT_EQ(e.status(), TC_ERROR_INVALID_SHAPE);
    EXPECT_NE(std::string(e.what()).find("-4"), std::string::npos) << e.what();
  }
  d.M = 8;  // C holds 4 x 4 floats only
  EXPECT_THROW(tc::gemm(ctx, d, A, B, C), tc::Error);
  EXPECT_EQ(C.to_vector<float>(), marks);
}

INSTANTIATE_TEST_SUITE_P(Devices, CppApi, ::testing::ValuesIn(all_devices()),
                         [](const auto& info) { return device_name(info.param); });

}  // namespace
}  // namespace tc::test
