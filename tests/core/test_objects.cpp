// Contexts, buffers and streams on every device: zero-copy rules, ranges, a stream with many
// queued ops in order, errors raised inside queued work reported at sync, and several threads
// sharing one context.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "common/backends.h"
#include "common/gemm_case.h"
#include "common/reference.h"

namespace tc::test {
namespace {

class Objects : public ::testing::TestWithParam<tc_device_t> {
 protected:
  void SetUp() override { TC_CONTEXT_OR_SKIP(g_, GetParam()); }
  ContextGuard g_;
};

TEST_P(Objects, DeviceInfo) {
  tc_device_info info;
  TC_ASSERT_OK(tc_context_device_info(g_.ctx, &info));
  EXPECT_EQ(info.device, GetParam());
  EXPECT_GT(info.compute_units, 0);
  EXPECT_GT(info.memory_bytes, 0u);
  EXPECT_GT(std::strlen(info.name), 0u);
}

TEST_P(Objects, BufferRoundTripAndRanges) {
  tc_buffer_t* b = nullptr;
  TC_ASSERT_OK(tc_buffer_alloc(g_.ctx, 1000, &b));
  EXPECT_EQ(tc_buffer_size(b), 1000u);
  std::vector<uint8_t> in(1000), out(1000, 0);
  std::mt19937 rng(3);
  for (auto& v : in) v = uint8_t(rng());
  TC_ASSERT_OK(tc_buffer_write(b, 0, in.data(), 1000));
  TC_ASSERT_OK(tc_buffer_read(b, 0, out.data(), 1000));
  EXPECT_EQ(in, out);
  TC_ASSERT_OK(tc_buffer_write(b, 997, in.data(), 3));
  TC_ASSERT_OK(tc_buffer_read(b, 997, out.data(), 3));
  EXPECT_EQ(out[2], in[2]);
  EXPECT_EQ(tc_buffer_write(b, 998, in.data(), 3), TC_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(tc_buffer_data(b) != nullptr, GetParam() == TC_DEVICE_CPU);
  TC_ASSERT_OK(tc_buffer_free(b));
}

TEST_P(Objects, FromPtrZeroCopyWhenAlignedElseCopy) {
  void* aligned = std::aligned_alloc(64, 256);
  std::memset(aligned, 7, 256);
  tc_buffer_t* b = nullptr;
  TC_ASSERT_OK(tc_buffer_from_ptr(g_.ctx, aligned, 256, &b));
  uint8_t first = 0;
  TC_ASSERT_OK(tc_buffer_read(b, 0, &first, 1));
  EXPECT_EQ(first, 7);
  if (GetParam() == TC_DEVICE_CPU) {
    EXPECT_EQ(tc_buffer_data(b), aligned);  // zero-copy
  }
  tc_buffer_free(b);
  char* unaligned = static_cast<char*>(aligned) + 1;
  TC_ASSERT_OK(tc_buffer_from_ptr(g_.ctx, unaligned, 100, &b));
  EXPECT_NE(tc_buffer_data(b), static_cast<void*>(unaligned));  // a copy
  TC_ASSERT_OK(tc_buffer_read(b, 0, &first, 1));
  EXPECT_EQ(first, 7);
  tc_buffer_free(b);
  std::free(aligned);
}

TEST_P(Objects, WrapIsNotOwned) {
  tc_buffer_t* owner = nullptr;
  TC_ASSERT_OK(tc_buffer_alloc(g_.ctx, 512, &owner));
  tc_buffer_t* view = nullptr;
  TC_ASSERT_OK(tc_buffer_wrap(g_.ctx, tc_buffer_device_ptr(owner), 512, &view));
  uint32_t v = 0xdeadbeef, r = 0;
  TC_ASSERT_OK(tc_buffer_write(view, 8, &v, 4));
  TC_ASSERT_OK(tc_buffer_free(view));  // must not free the memory
  TC_ASSERT_OK(tc_buffer_read(owner, 8, &r, 4));
  EXPECT_EQ(r, v);
  TC_ASSERT_OK(tc_buffer_free(owner));
}

TEST_P(Objects, StreamRunsManyOpsInOrder) {
  // 200 GEMMs chained through one buffer: C_{i+1} = 1 * A @ B + 1 * C_i; in-order execution
  // gives exactly 200 * (A @ B) with integer-valued f32 data.
  const int n = 16;
  std::vector<float> A(n * n), B(n * n);
  std::mt19937 rng(11);
  for (auto& x : A) x = float(int(rng() % 5) - 2);
  for (auto& x : B) x = float(int(rng() % 5) - 2);
  tc_buffer_t *a, *b, *c;
  TC_ASSERT_OK(tc_buffer_alloc(g_.ctx, n * n * 4, &a));
  TC_ASSERT_OK(tc_buffer_alloc(g_.ctx, n * n * 4, &b));
  TC_ASSERT_OK(tc_buffer_alloc(g_.ctx, n * n * 4, &c));
  std::vector<float> zero(n * n, 0.0f);
  tc_buffer_write(a, 0, A.data(), A.size() * 4);
  tc_buffer_write(b, 0, B.data(), B.size() * 4);
  tc_buffer_write(c, 0, zero.data(), zero.size() * 4);
  tc_stream_t* s;
  TC_ASSERT_OK(tc_stream_create(g_.ctx, &s));
  tc_gemm_desc d{
      n, n, n, TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32, false, false, 1.0f, 1.0f,
      0, 0, 0};
  for (int i = 0; i < 200; ++i) TC_ASSERT_OK(tc_gemm_async(g_.ctx, &d, a, b, c, s));
  TC_ASSERT_OK(tc_stream_sync(s));
  std::vector<float> C(n * n);
  tc_buffer_read(c, 0, C.data(), C.size() * 4);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float want = 0;
      for (int k = 0; k < n; ++k) want += A[i * n + k] * B[k * n + j];
      ASSERT_EQ(C[i * n + j], 200 * want) << i << "," << j;
    }
  TC_ASSERT_OK(tc_stream_destroy(s));
  tc_buffer_free(a), tc_buffer_free(b), tc_buffer_free(c);
}

TEST_P(Objects, ErrorsInQueuedWorkAreReportedAtSync) {
  tc_stream_t* s;
  TC_ASSERT_OK(tc_stream_create(g_.ctx, &s));
  static std::atomic<int> order{0};
  order = 0;
  auto ok = [](void* p) -> tc_status_t {
    static_cast<std::atomic<int>*>(p)->fetch_add(1);
    return TC_SUCCESS;
  };
  auto bad = [](void*) -> tc_status_t { return TC_ERROR_BACKEND_FAILURE; };
  TC_ASSERT_OK(tc_stream_enqueue_host(s, ok, &order));
  TC_ASSERT_OK(tc_stream_enqueue_host(s, bad, nullptr));  // queued: not an error yet
  TC_ASSERT_OK(tc_stream_enqueue_host(s, ok, &order));
  EXPECT_EQ(tc_stream_sync(s), TC_ERROR_BACKEND_FAILURE);
  EXPECT_NE(std::string(tc_last_error_message()).find("queued"), std::string::npos)
      << tc_last_error_message();
  EXPECT_EQ(order.load(), 2);
  TC_ASSERT_OK(tc_stream_sync(s));  // the error was reported once
  TC_ASSERT_OK(tc_stream_destroy(s));
}

TEST_P(Objects, ThreadsShareOneContext) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      for (int i = 0; i < 5; ++i) {
        GemmCase c{33 + t, 29 + i, 31, bool(i & 1), bool(t & 1), 1.0f, 0.5f};
        c.use_async = (i % 2) == 0;
        GemmDtypes types[] = {{TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32},
                              {TC_DTYPE_BF16, TC_DTYPE_F32, TC_DTYPE_F32}};
        GemmDtypes ty = types[(t + i) % 2];
        if (run_gemm_case(g_.ctx, c, ty, rng) > gemm_tolerance(ty.in, ty.out)) failures++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(AllDevices, Objects, ::testing::ValuesIn(all_devices()),
                         [](const auto& info) { return device_name(info.param); });

}  // namespace
}  // namespace tc::test
