// Kernel::launch on tc buffers and streams (CPU context here; a CUDA context on gpu-check).
#include "tc/tc.h"

#include <gtest/gtest.h>

#include <random>

#include "phobos/phobos.h"
#include "util.h"

TEST(PhobosTc, SgemmOnTcBuffersMatchesFloat64) {
  tc_context_t* ctx = nullptr;
  ASSERT_EQ(tc_context_create(&ctx, TC_DEVICE_CPU), TC_SUCCESS);
  tc_stream_t* stream = nullptr;
  ASSERT_EQ(tc_stream_create(ctx, &stream), TC_SUCCESS);
  const int64_t M = 37, N = 53, K = 29;
  std::mt19937 g(5);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (auto* v : {&a, &b, &c})
    for (auto& x : *v) x = u(g);
  tc_buffer_t *A, *B, *C;
  ASSERT_EQ(tc_buffer_alloc(ctx, a.size() * 4, &A), TC_SUCCESS);
  ASSERT_EQ(tc_buffer_alloc(ctx, b.size() * 4, &B), TC_SUCCESS);
  ASSERT_EQ(tc_buffer_alloc(ctx, c.size() * 4, &C), TC_SUCCESS);
  tc_buffer_write(A, 0, a.data(), a.size() * 4);
  tc_buffer_write(B, 0, b.data(), b.size() * 4);
  tc_buffer_write(C, 0, c.data(), c.size() * 4);
  auto k = phobos::compile(phobos_test::example("ragged.ph"), "ragged.ph").kernel("sgemm_ragged");
  using phobos::DType;
  std::vector<phobos::BufferArg> args = {phobos::BufferView{A, DType::F32, {M, K}},
                                         phobos::BufferView{B, DType::F32, {K, N}},
                                         phobos::BufferView{C, DType::F32, {M, N}}, 2.0, 0.5};
  phobos::LaunchOptions opt;
  opt.autotune = false;
  k.launch(args, stream, opt);
  ASSERT_EQ(tc_stream_sync(stream), TC_SUCCESS);  // a CUDA launch is asynchronous
  std::vector<float> out(M * N);
  tc_buffer_read(C, 0, out.data(), out.size() * 4);
  std::vector<double> y(out.begin(), out.end()), ref(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t q = 0; q < K; ++q) s += double(a[i * K + q]) * b[q * N + j];
      ref[i * N + j] = 2.0 * s + 0.5 * c[i * N + j];
    }
  EXPECT_LE(phobos_test::rms_scaled(y, ref), 1e-5);
  // A buffer smaller than the shape is a launch error naming the sizes.
  std::vector<phobos::BufferArg> bad = args;
  std::get<phobos::BufferView>(bad[2]).shape = {M + 1, N};
  EXPECT_THROW(k.launch(bad, stream, opt), phobos::Error);
  for (auto* x : {A, B, C}) tc_buffer_free(x);
  tc_stream_destroy(stream);
  tc_context_destroy(ctx);
}
