// The CUDA device without GEMM: "no device" as a status (CI, which has the toolkit but no
// driver, runs that case), device properties, and the caching allocator's promises: reuse of
// freed blocks, held <= peak live + 10%, and tc_context_trim returning the cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/backends.h"

namespace tc::test {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(CudaDevice, AbsentDeviceIsAStatusNotACrash) {
#ifndef TC_HAVE_CUDA
  GTEST_SKIP() << "this build of tc has no CUDA backend";
#else
  if (tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "a CUDA device is present";
  tc_context_t* ctx = nullptr;
  EXPECT_EQ(tc_context_create(&ctx, TC_DEVICE_CUDA), TC_ERROR_NO_DEVICE);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::strstr(tc_last_error_message(), "no CUDA device"), nullptr)
      << tc_last_error_message();
  // AUTO falls back to the CPU.
  ASSERT_EQ(tc_context_create(&ctx, TC_DEVICE_AUTO), TC_SUCCESS);
  tc_device_info info;
  ASSERT_EQ(tc_context_device_info(ctx, &info), TC_SUCCESS);
  EXPECT_EQ(info.device, TC_DEVICE_CPU);
  tc_context_destroy(ctx);
#endif
}

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override { TC_CONTEXT_OR_SKIP(g_, TC_DEVICE_CUDA); }
  struct Stats {
    uint64_t live, held, peak;
  };
  Stats stats() {
    Stats s{};
    EXPECT_EQ(tc_context_memory_stats(g_.ctx, &s.live, &s.held, &s.peak), TC_SUCCESS);
    return s;
  }
  ContextGuard g_;
};

TEST_F(CudaDeviceTest, PropertiesOfTheGpu) {
  tc_device_info info;
  ASSERT_EQ(tc_context_device_info(g_.ctx, &info), TC_SUCCESS);
  EXPECT_EQ(info.device, TC_DEVICE_CUDA);
  EXPECT_GT(info.compute_units, 0);
  EXPECT_GE(info.cc_major, 7);
  EXPECT_GT(info.memory_bytes, uint64_t(1) << 30);
  EXPECT_GT(info.l2_bytes, 0u);
  EXPECT_GT(std::strlen(info.name), 0u);
}

TEST_F(CudaDeviceTest, FreedBlocksAreReusedAndTrimReturnsThem) {
  ASSERT_EQ(tc_context_trim(g_.ctx), TC_SUCCESS);
  const Stats s0 = stats();
  tc_buffer_t* b = nullptr;
  ASSERT_EQ(tc_buffer_alloc(g_.ctx, 64 * kMiB, &b), TC_SUCCESS);
  const Stats s1 = stats();
  EXPECT_EQ(s1.live - s0.live, 64 * kMiB);
  EXPECT_EQ(s1.held - s0.held, 64 * kMiB);
  ASSERT_EQ(tc_buffer_free(b), TC_SUCCESS);
  const Stats s2 = stats();
  EXPECT_EQ(s2.live, s0.live);
  EXPECT_EQ(s2.held, s1.held) << "the freed block stays cached";
  // The same size (and one a little smaller) comes from the cache: nothing new is held.
  ASSERT_EQ(tc_buffer_alloc(g_.ctx, 64 * kMiB - 1000, &b), TC_SUCCESS);
  EXPECT_EQ(stats().held, s1.held);
  ASSERT_EQ(tc_buffer_free(b), TC_SUCCESS);
  EXPECT_GE(stats().peak, s1.held);
  ASSERT_EQ(tc_context_trim(g_.ctx), TC_SUCCESS);
  const Stats s3 = stats();
  EXPECT_EQ(s3.held, s3.live) << "trim returns every cached block";
  EXPECT_EQ(s3.peak, s3.held) << "trim restarts the peak";
}

TEST_F(CudaDeviceTest, HeldNeverExceedsPeakLivePlusTenPercent) {
  ASSERT_EQ(tc_context_trim(g_.ctx), TC_SUCCESS);
  // Growing, shrinking and mixed sizes: the pattern that makes naive caches hoard.
  const uint64_t sizes[] = {8, 16, 4, 32, 8, 64, 2, 48, 96, 1, 24, 128, 12, 80};
  std::vector<tc_buffer_t*> live;
  uint64_t peak_live = stats().live;
  for (int round = 0; round < 3; ++round) {
    for (uint64_t mib : sizes) {
      tc_buffer_t* b = nullptr;
      ASSERT_EQ(tc_buffer_alloc(g_.ctx, mib * kMiB + 4096 * round, &b), TC_SUCCESS);
      live.push_back(b);
      Stats s = stats();
      peak_live = std::max(peak_live, s.live);
      EXPECT_LE(s.held, peak_live + peak_live / 10) << "after allocating " << mib << " MiB";
      if (live.size() > 3) {  // keep a sliding window of three live buffers
        ASSERT_EQ(tc_buffer_free(live.front()), TC_SUCCESS);
        live.erase(live.begin());
        s = stats();
        EXPECT_LE(s.held, peak_live + peak_live / 10);
      }
    }
  }
  for (auto* b : live) ASSERT_EQ(tc_buffer_free(b), TC_SUCCESS);
  ASSERT_EQ(tc_context_trim(g_.ctx), TC_SUCCESS);
  EXPECT_EQ(stats().held, 0u);
}

TEST_F(CudaDeviceTest, OutOfMemoryIsAStatus) {
  tc_buffer_t* b = nullptr;
  EXPECT_EQ(tc_buffer_alloc(g_.ctx, size_t(1) << 50, &b), TC_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(b, nullptr);
  EXPECT_NE(std::strstr(tc_last_error_message(), "bytes"), nullptr) << tc_last_error_message();
  // The context still works.
  ASSERT_EQ(tc_buffer_alloc(g_.ctx, 1024, &b), TC_SUCCESS);
  EXPECT_EQ(tc_buffer_free(b), TC_SUCCESS);
}

TEST_F(CudaDeviceTest, HostFunctionsRunInStreamOrderAndReportErrorsAtSync) {
  tc_stream_t* s = nullptr;
  ASSERT_EQ(tc_stream_create(g_.ctx, &s), TC_SUCCESS);
  static std::vector<int> order;
  order.clear();
  auto push = [](void* v) -> tc_status_t {
    order.push_back(int(reinterpret_cast<intptr_t>(v)));
    return TC_SUCCESS;
  };
  auto bad = [](void*) -> tc_status_t { return TC_ERROR_INVALID_VALUE; };
  ASSERT_EQ(tc_stream_enqueue_host(s, push, reinterpret_cast<void*>(1)), TC_SUCCESS);
  ASSERT_EQ(tc_stream_enqueue_host(s, bad, nullptr), TC_SUCCESS);
  ASSERT_EQ(tc_stream_enqueue_host(s, push, reinterpret_cast<void*>(2)), TC_SUCCESS);
  EXPECT_EQ(tc_stream_sync(s), TC_ERROR_INVALID_VALUE);
  EXPECT_NE(std::strstr(tc_last_error_message(), "host function"), nullptr)
      << tc_last_error_message();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(tc_stream_sync(s), TC_SUCCESS) << "the error is reported once";
  EXPECT_EQ(tc_stream_destroy(s), TC_SUCCESS);
}

}  // namespace
}  // namespace tc::test
