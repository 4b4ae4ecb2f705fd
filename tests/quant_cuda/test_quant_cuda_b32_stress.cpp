// The batched decode wgmma kernel (launch_mma_b32) at scale: repeated many times at one shape,
// each launch into its own Y (a race that shows once in many launches has a chance to show here:
// the Q4_K helpers' scale slots, the K split inside clusters). The timings are in
// test_quant_cuda_b32_timing.cpp. Skips without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda/quant_kernels.h"
#include "cuda/quant_mma_b32.h"
#include "device_inputs.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

// Q4_K at M <= 16 on the 7B gate/up shape, many launches back to back, each into its own Y:
// every one must match float64 and the first bit for bit. The regression test for the helper
// warps' scale slots (quant_mma_b32_kernel.cuh: Q4_K rings are even; with an odd ring the
// helpers could overwrite slot 0's scales before the consumers loaded them, a window of a few
// hundred cycles, or complete its barrier phase early and hang: ctest's timeout catches that).
// Also with W boxes of two stages (TC_QUANT_B32_WBOX=pair; Q4_K's splits are even either way):
// the same bits as the one-stage boxes.
TEST(QuantCudaB32, Q4KRepeatsAtTheFfnShape) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  const Weights wt = make_weights(TC_DTYPE_Q4_K, 14336, 4096, 9900u);  // ~5 s: made once
  std::vector<float> stage_y;
  for (const int form : {0, 1, 2, 3}) {
    const int M = form < 2 ? 13 : 16;
    set_knob("TC_QUANT_B32_WBOX", form % 2 ? "pair" : "stage");
    const LaunchCase c{TC_DTYPE_Q4_K, M, 14336, 4096};
    const Activations a = make_activations(TC_DTYPE_F32, c.M, c.K, 9950u + unsigned(M));
    const std::vector<double> ref = reference(wt, a, c.M, c.N, c.K);
    constexpr int kLaunches = 48;
    DevMem w(wt.bytes.size()), x(a.bytes()), y(ref.size() * 4 * kLaunches);
    ASSERT_NO_FATAL_FAILURE(upload(wt, a, w, x));
    const size_t work_bytes = kq::mma_b32_work_bytes(launch_args(c, w, x, y));
    DevMem work(std::max<size_t>(work_bytes, 16));
    ASSERT_EQ(cudaMemsetAsync(y.p, 0xff, ref.size() * 4 * kLaunches, st), cudaSuccess);
    for (int i = 0; i < kLaunches; ++i) {
      kq::Args args = launch_args(c, w, x, y, work.p, work_bytes);
      args.y = static_cast<float*>(y.p) + size_t(i) * ref.size();
      args.pdl = i % 2 == 1;
      ASSERT_EQ(kq::launch_mma_b32(args, st), TC_SUCCESS) << tc_last_error_message();
    }
    std::vector<float> all(ref.size() * kLaunches);
    ASSERT_EQ(cudaMemcpyAsync(all.data(), y.p, all.size() * 4, cudaMemcpyDeviceToHost, st),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
    const std::vector<float> first(all.begin(), all.begin() + ref.size());
    EXPECT_LE(rms_scaled(first, ref), 1e-3) << "M=" << M << " form=" << form;
    int differ = 0;
    for (int i = 1; i < kLaunches; ++i)
      differ += !std::equal(first.begin(), first.end(), all.begin() + size_t(i) * ref.size());
    EXPECT_EQ(differ, 0) << "of " << kLaunches - 1 << " repeats differ from the first, M=" << M
                         << " form=" << form;
    if (form % 2 == 0) stage_y = first;
    EXPECT_TRUE(first == stage_y) << "pair boxes differ from one-stage boxes, M=" << M;
  }
  set_knob("TC_QUANT_B32_WBOX", "");
  cudaStreamDestroy(st);
}

// The K split inside clusters (the default where every cluster is resident) on the O
// projection's shape split 4 ways (Q4_0: 22 W tiles of 192 rows x 4 splits of 8 stages, 88 CTAs
// in 22 clusters of 4; Q8_0: 16 tiles of 256 rows, 64 CTAs; clusters of 8 do not fit 16 at once
// on the H200, 2026-11-30), Q4_0 and Q8_0
// at M = 32 and 13: many launches back to back (every other one under PDL), each into its own
// Y; each must match float64 and, bit for bit, the workspace fixup's Y (TC_QUANT_B32_CLUSTER=0,
// the same adds in the same order). Prints whether the device ran the cluster path.
TEST(QuantCudaB32, ClusterSplitRepeatsAtTheOShape) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  uint32_t seed = 9960;
  for (const tc_dtype_t f : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0}) {
    const Weights wt = make_weights(f, 4096, 4096, seed++);
    for (const int M : {32, 13}) {
      const LaunchCase c{f, M, 4096, 4096};
      const Activations a = make_activations(TC_DTYPE_F32, c.M, c.K, seed++);
      const std::vector<double> ref = reference(wt, a, c.M, c.N, c.K);
      constexpr int kLaunches = 24;
      DevMem w(wt.bytes.size()), x(a.bytes()), y(ref.size() * 4 * (kLaunches + 1));
      ASSERT_NO_FATAL_FAILURE(upload(wt, a, w, x));
      const size_t work_bytes = kq::mma_b32_work_bytes(launch_args(c, w, x, y));
      DevMem work(std::max<size_t>(work_bytes, 16));
      ASSERT_EQ(cudaMemsetAsync(y.p, 0xff, ref.size() * 4 * (kLaunches + 1), st), cudaSuccess);
      for (int i = 0; i <= kLaunches; ++i) {  // the last one with the workspace fixup
        setenv("TC_QUANT_B32_CLUSTER", i < kLaunches ? "1" : "0", 1);
        setenv("TC_QUANT_B32_SPLITS", "4", 1);
        kq::Args args = launch_args(c, w, x, y, work.p, work_bytes);
        args.y = static_cast<float*>(y.p) + size_t(i) * ref.size();
        args.pdl = i % 2 == 1;
        if (i == 0)
          std::printf("b32 cluster split: %s M=%d 4096x4096: %s\n",
                      f == TC_DTYPE_Q4_0 ? "q4_0" : "q8_0", M,
                      kq::mma_b32_cluster_split(args) ? "clusters" : "workspace fixup");
        ASSERT_EQ(kq::launch_mma_b32(args, st), TC_SUCCESS) << tc_last_error_message();
      }
      unsetenv("TC_QUANT_B32_CLUSTER");
      unsetenv("TC_QUANT_B32_SPLITS");
      std::vector<float> all(ref.size() * (kLaunches + 1));
      ASSERT_EQ(cudaMemcpyAsync(all.data(), y.p, all.size() * 4, cudaMemcpyDeviceToHost, st),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
      const std::vector<float> first(all.begin(), all.begin() + ref.size());
      EXPECT_LE(rms_scaled(first, ref), 1e-3) << "w=" << f << " M=" << M;
      int differ = 0;
      for (int i = 1; i <= kLaunches; ++i)
        differ += !std::equal(first.begin(), first.end(), all.begin() + size_t(i) * ref.size());
      EXPECT_EQ(differ, 0) << "of " << kLaunches << " launches differ from the first, w=" << f
                           << " M=" << M;
    }
  }
  cudaStreamDestroy(st);
}

}  // namespace
}  // namespace tc::quant_test
