// The batched decode wgmma kernel (launch_mma_b32) at scale: repeated many times at one shape,
// each launch into its own Y (a race that shows once in many launches has a chance to show here:
// the Q4_K helpers' scale slots, the K split inside clusters), and, with TC_QUANT_B32_TIMING=1,
// timed against the kernels it replaces and across forced K splits. Skips without a CUDA device.
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

void set_knob(const char* name, const char* v) {  // "" unsets
  *v ? setenv(name, v, 1) : unsetenv(name);
}

// Q4_K at M <= 16 on the 7B gate/up shape, many launches back to back, each into its own Y:
// every one must match float64 and the first bit for bit. The regression test for the helper
// warps' scale slots (quant_mma_b32_kernel.cuh: Q4_K rings are even; with an odd ring the
// helpers could overwrite slot 0's scales before the consumers loaded them, a window of a few
// hundred cycles, or complete its barrier phase early and hang: ctest's timeout catches that).
TEST(QuantCudaB32, Q4KRepeatsAtTheFfnShape) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  const Weights wt = make_weights(TC_DTYPE_Q4_K, 14336, 4096, 9900u);  // ~5 s: made once
  for (const int M : {13, 16}) {
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
    EXPECT_LE(rms_scaled(first, ref), 1e-3) << "M=" << M;
    int differ = 0;
    for (int i = 1; i < kLaunches; ++i)
      differ += !std::equal(first.begin(), first.end(), all.begin() + size_t(i) * ref.size());
    EXPECT_EQ(differ, 0) << "of " << kLaunches - 1 << " repeats differ from the first, M=" << M;
  }
  cudaStreamDestroy(st);
}

// The K split inside clusters (the default where every cluster is resident) on the O
// projection's shape split 4 ways (16 W tiles x 4 splits of 8 stages: 64 CTAs in 16 clusters
// of 4; the chosen 8 splits do not fit as clusters of 8 on the H200, 2026-11-30), Q4_0 and Q8_0
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

// Median us per launch of `launch` over batches of 20 (CUDA events), weights rotated.
template <class F>
double time_us(cudaStream_t st, F launch) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int i = 0; i < 20; ++i) launch(i);
  std::vector<float> t;
  for (int rep = 0; rep < 15; ++rep) {
    cudaEventRecord(e0, st);
    for (int i = 0; i < 20; ++i) launch(i);
    cudaEventRecord(e1, st);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms * 1e3f / 20);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The fixed cost of a launch (TimingAgainstF16Mma runs it). Forced K splits of 4096x4096 (16
// W tiles; 32, 16, 8, 4, 2 stages a CTA) and one 256x256 tile (2 stages), the workspace fixup
// against the split in clusters, weights rotated, under PDL: time against stages a CTA gives
// the cost of a stage (slope) and of a launch (intercept), and how it grows with the split
// count.
void sweep_splits(cudaStream_t st) {
  for (tc_dtype_t f : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0}) {
    for (const int N : {4096, 256}) {
      const int K = N;
      const size_t bytes = tc_quant_row_bytes(f, K) * N;
      const size_t copies = std::max<size_t>(1, (size_t(256) << 20) / bytes + 1);
      kq::Args a;
      a.M = 32;
      a.N = N;
      a.K = K;
      a.w_dtype = f;
      setenv("TC_QUANT_B32_SPLITS", "16", 1);  // the largest workspace of the sweep
      const size_t work_bytes = kq::mma_b32_work_bytes(a);
      DevMem w(bytes * copies), x(size_t(32) * K * 4), y(size_t(32) * N * 4), work(work_bytes);
      ASSERT_EQ(kq::launch_fill_random_blocks(f, w.p, int64_t(N) * int64_t(copies), K, 5, st),
                TC_SUCCESS);
      ASSERT_EQ(cudaMemsetAsync(x.p, 0x3c, size_t(32) * K * 4, st), cudaSuccess);
      a.x = x.p;
      a.y = static_cast<float*>(y.p);
      a.work = work.p;
      a.work_bytes = work_bytes;
      a.pdl = true;
      for (const int M : {32, 16}) {
        a.M = M;
        for (const char* splits : {"1", "2", "4", "8", "16"}) {
          if (N == 256 && std::atoi(splits) > 1) break;  // 2 stages: one split
          set_knob("TC_QUANT_B32_SPLITS", splits);
          double us[2];
          bool clustered = false;
          for (int k = 0; k < 2; ++k) {
            set_knob("TC_QUANT_B32_CLUSTER", k == 0 ? "0" : "");
            if (k == 1) clustered = kq::mma_b32_cluster_split(a);
            us[k] = time_us(st, [&](int i) {
              a.w = static_cast<uint8_t*>(w.p) + bytes * (size_t(i) % copies);
              EXPECT_EQ(kq::launch_mma_b32(a, st), TC_SUCCESS) << tc_last_error_message();
            });
          }
          set_knob("TC_QUANT_B32_CLUSTER", "");
          std::printf(
              "b32 sweep %s %dx%d M=%2d splits=%2s: workspace fixup %7.1f us, cluster %7.1f "
              "us (%s)\n",
              f == TC_DTYPE_Q4_0 ? "q4_0" : "q8_0", N, K, M, splits, us[0], us[1],
              clustered ? "clusters" : "not taken");
          std::fflush(stdout);
        }
      }
      set_knob("TC_QUANT_B32_SPLITS", "");
    }
  }
}

// TC_QUANT_B32_TIMING=1: this kernel against the kernel it replaces at M > 8 (the f16 MMA; for
// Q8_0 the int8 MMA), both under PDL as in the decode step, weights rotated through >= 256 MB
// (the stream shape: one 302-570 MB matrix); then the split sweep above. Prints; asserts only
// that the kernels launch.
TEST(QuantCudaB32, TimingAgainstF16Mma) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  if (!std::getenv("TC_QUANT_B32_TIMING")) GTEST_SKIP() << "TC_QUANT_B32_TIMING not set";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  struct Shape {
    const char* label;
    int N, K;
  };
  for (tc_dtype_t f : {TC_DTYPE_Q4_0, TC_DTYPE_Q4_K, TC_DTYPE_Q8_0}) {
    const bool q8 = f == TC_DTYPE_Q8_0;
    for (const Shape sh :
         {Shape{"rotated 14336x4096", 14336, 4096}, Shape{"rotated 4096x4096", 4096, 4096},
          Shape{"rotated 4096x11008", 4096, 11008}, Shape{"stream 131072x4096", 131072, 4096}}) {
      const size_t bytes = tc_quant_row_bytes(f, sh.K) * sh.N;
      const size_t copies = std::max<size_t>(1, (size_t(256) << 20) / bytes + 1);
      kq::Args a;
      a.M = 32;
      a.N = sh.N;
      a.K = sh.K;
      a.w_dtype = f;
      const size_t work_bytes = std::max({kq::mma_b32_work_bytes(a), kq::mma_f16_work_bytes_upto(a),
                                          q8 ? kq::mma_bulk_work_bytes(a) : size_t(0)});
      DevMem w(bytes * copies), x(size_t(32) * sh.K * 4), y(size_t(32) * sh.N * 4),
          work(work_bytes);
      ASSERT_EQ(kq::launch_fill_random_blocks(f, w.p, int64_t(sh.N) * int64_t(copies), sh.K, 3, st),
                TC_SUCCESS);
      ASSERT_EQ(cudaMemsetAsync(x.p, 0x3c, size_t(32) * sh.K * 4, st), cudaSuccess);
      a.x = x.p;
      a.y = static_cast<float*>(y.p);
      a.work = work.p;
      a.work_bytes = work_bytes;
      a.pdl = true;
      for (int M : {16, 32}) {
        a.M = M;
        // b32; the 8-loads workspace fixup (TC_QUANT_B32_FIXUP=vec8 CLUSTER=0, the c79865c
        // form); X always by its helper warps / always by the convert kernel
        // (TC_QUANT_B32_XCONV=helpers / kernel);
        // the workspace fixup where the split could run in clusters (TC_QUANT_B32_CLUSTER=0);
        // the resident convert kernel (TC_QUANT_B32_CONVERT=resident); the older kernel (f16
        // MMA, Q8_0 int8 MMA).
        double us[7];
        for (int k = 0; k < 7; ++k) {
          set_knob("TC_QUANT_B32_FIXUP", k == 1 ? "vec8" : "");
          set_knob("TC_QUANT_B32_XCONV", k == 2 ? "helpers" : k == 3 ? "kernel" : "");
          set_knob("TC_QUANT_B32_CLUSTER", k == 1 || k == 4 ? "0" : "");
          set_knob("TC_QUANT_B32_CONVERT", k == 5 ? "resident" : "");
          us[k] = time_us(st, [&](int i) {
            a.w = static_cast<uint8_t*>(w.p) + bytes * (size_t(i) % copies);
            const tc_status_t s = k < 6 ? kq::launch_mma_b32(a, st)
                                  : q8  ? kq::launch_mma_bulk(a, st)
                                        : kq::launch_mma_f16(a, st);
            EXPECT_EQ(s, TC_SUCCESS) << tc_last_error_message();
          });
        }
        set_knob("TC_QUANT_B32_XCONV", "");
        set_knob("TC_QUANT_B32_FIXUP", "");
        set_knob("TC_QUANT_B32_CLUSTER", "");
        set_knob("TC_QUANT_B32_CONVERT", "");
        const char* fmt = f == TC_DTYPE_Q4_0 ? "q4_0" : q8 ? "q8_0" : "q4_k";
        std::printf(
            "b32 timing %s %-19s M=%2d  b32 %7.1f us (%5.0f GB/s)  fixup=vec8 %7.1f  "
            "xconv=helpers %7.1f  =kernel %7.1f  cluster=0 %7.1f  convert=resident %7.1f  old "
            "%7.1f us "
            "(%5.0f GB/s)  %.2fx\n",
            fmt, sh.label, M, us[0], double(bytes) / us[0] / 1e3, us[1], us[2], us[3], us[4], us[5],
            us[6], double(bytes) / us[6] / 1e3, us[6] / us[0]);
        std::fflush(stdout);
      }
    }
  }
  sweep_splits(st);
  cudaStreamDestroy(st);
}

}  // namespace
}  // namespace tc::quant_test
