// Timings of the batched decode wgmma kernel (launch_mma_b32), with TC_QUANT_B32_TIMING=1 (they
// skip without it and without a CUDA device): against the kernels it replaces, across forced
// K splits, and the W stream's forms. CUDA events, medians, weights rotated through >= 256 MB
// so that they stream from HBM, launches back to back under PDL as in the decode step. Print;
// assert only that the kernels launch.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <vector>

#include "cuda/quant_kernels.h"
#include "cuda/quant_mma_b32.h"
#include "device_inputs.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

// Why the timings do not run here (nullptr: they do).
const char* timing_skip() {
  if (!tc_device_available(TC_DEVICE_CUDA)) return "no CUDA device";
  return std::getenv("TC_QUANT_B32_TIMING") ? nullptr : "TC_QUANT_B32_TIMING not set";
}

// A CUDA context and a non-blocking stream for the timed launches.
struct TimingStream {
  Context ctx;
  cudaStream_t st = nullptr;
  TimingStream() {
    EXPECT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
    EXPECT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  }
  ~TimingStream() { cudaStreamDestroy(st); }
};

// Format f, N x K: random blocks repeated through >= 256 MB (launch i reads copy i % copies,
// so that W streams from HBM, not from the 60 MB L2), X 32 x K f32 (bytes 0x3c), Y, and a
// workspace as large as the largest of `sizes` asks for M = 32; `a` is set up for M = 32
// under PDL (the caller sets a.w per launch: weights(i)).
struct Rotated {
  using Size = std::function<size_t(const kq::Args&)>;
  size_t bytes, copies;
  kq::Args a;
  DevMem w, x, y, work;
  Rotated(tc_dtype_t f, int N, int K, std::initializer_list<Size> sizes, int seed, cudaStream_t st)
      : bytes(tc_quant_row_bytes(f, K) * size_t(N)),
        copies(std::max<size_t>(1, (size_t(256) << 20) / bytes + 1)),
        a(args(f, N, K)),
        w(bytes * copies),
        x(size_t(32) * K * 4),
        y(size_t(32) * N * 4),
        work(std::max<size_t>(16, most(sizes))) {
    EXPECT_EQ(kq::launch_fill_random_blocks(f, w.p, int64_t(N) * int64_t(copies), K, seed, st),
              TC_SUCCESS);
    EXPECT_EQ(cudaMemsetAsync(x.p, 0x3c, size_t(32) * K * 4, st), cudaSuccess);
    a.x = x.p;
    a.y = static_cast<float*>(y.p);
    a.work = work.p;
    a.work_bytes = most(sizes);
    a.pdl = true;
  }
  static kq::Args args(tc_dtype_t f, int N, int K) {
    kq::Args q;
    q.M = 32;
    q.N = N;
    q.K = K;
    q.w_dtype = f;
    return q;
  }
  size_t most(std::initializer_list<Size> sizes) const {
    size_t b = 0;
    for (const Size& s : sizes)
      if (s) b = std::max(b, s(a));
    return b;
  }
  void* weights(int i) const { return static_cast<uint8_t*>(w.p) + bytes * (size_t(i) % copies); }
};

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
      setenv("TC_QUANT_B32_SPLITS", "16", 1);  // the largest workspace of the sweep
      Rotated r(f, N, N, {kq::mma_b32_work_bytes}, 5, st);
      kq::Args& a = r.a;
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
              a.w = r.weights(i);
              EXPECT_EQ(kq::launch_mma_b32(a, st), TC_SUCCESS) << tc_last_error_message();
            });
          }
          set_knob("TC_QUANT_B32_CLUSTER", "");
          std::printf(
              "b32 sweep %s %dx%d M=%2d splits=%2s: workspace fixup %7.1f us, cluster %7.1f "
              "us (%s)\n",
              f == TC_DTYPE_Q4_0 ? "q4_0" : "q8_0", N, N, M, splits, us[0], us[1],
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
  if (const char* why = timing_skip()) GTEST_SKIP() << why;
  TimingStream ts;
  cudaStream_t st = ts.st;
  struct Shape {
    const char* label;
    int N, K;
  };
  for (tc_dtype_t f : {TC_DTYPE_Q4_0, TC_DTYPE_Q4_K, TC_DTYPE_Q8_0}) {
    const bool q8 = f == TC_DTYPE_Q8_0;
    for (const Shape sh :
         {Shape{"rotated 14336x4096", 14336, 4096}, Shape{"rotated 4096x4096", 4096, 4096},
          Shape{"rotated 4096x11008", 4096, 11008}, Shape{"stream 131072x4096", 131072, 4096}}) {
      Rotated r(f, sh.N, sh.K,
                {kq::mma_b32_work_bytes, kq::mma_f16_work_bytes_upto,
                 q8 ? kq::mma_bulk_work_bytes : nullptr},
                3, st);
      kq::Args& a = r.a;
      const size_t bytes = r.bytes;
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
            a.w = r.weights(i);
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
}

// TC_QUANT_B32_TIMING=1: the W stream's forms (quant_mma_b32_kernel.cuh), M = 32, weights
// rotated, under PDL: one-stage boxes issued one at a time (WBOX=stage; the default but for
// Q4_0), 2 or 4 stages at once
// (TC_QUANT_B32_WBATCH), even splits (TC_QUANT_B32_EVEN=1, the pairs' split), boxes of two
// stages (TC_QUANT_B32_WBOX=pair) alone and two at once; each also with the consumers
// computing nothing (TC_QUANT_B32_ABLATE=stream: what the W and X stream alone costs) and
// without X's copies as well (=w; 4096x4096's helpers still convert X). Prints.
TEST(QuantCudaB32, TimingWBox) {
  if (const char* why = timing_skip()) GTEST_SKIP() << why;
  TimingStream ts;
  cudaStream_t st = ts.st;
  struct Form {
    const char *label, *wbox, *batch, *even;
  };
  const Form forms[] = {{"stage", "stage", "", ""},     {"stage-b2", "stage", "2", ""},
                        {"stage-b4", "stage", "4", ""}, {"even", "stage", "", "1"},
                        {"pair", "pair", "", ""},       {"pair-b4", "pair", "4", ""}};
  for (tc_dtype_t f : {TC_DTYPE_Q4_0, TC_DTYPE_Q4_K, TC_DTYPE_Q8_0}) {
    for (const int N : {131072, 14336, 4096}) {
      const int K = 4096;
      // Pair boxes split K evenly: room for either split's partials.
      auto paired = [](const kq::Args& q) {
        setenv("TC_QUANT_B32_WBOX", "pair", 1);
        const size_t b = kq::mma_b32_work_bytes(q);
        unsetenv("TC_QUANT_B32_WBOX");
        return b;
      };
      Rotated r(f, N, K, {kq::mma_b32_work_bytes, paired}, 7, st);
      kq::Args& a = r.a;
      const size_t bytes = r.bytes;
      const char* fmt = f == TC_DTYPE_Q4_0 ? "q4_0" : f == TC_DTYPE_Q8_0 ? "q8_0" : "q4_k";
      for (const char* ablate : {"", "stream", "w"}) {
        set_knob("TC_QUANT_B32_ABLATE", ablate);
        std::printf("b32 wbox %s %6dx%d M=32 %-7s", fmt, N, K, *ablate ? ablate : "full");
        for (const Form& fm : forms) {
          set_knob("TC_QUANT_B32_WBOX", fm.wbox);
          set_knob("TC_QUANT_B32_WBATCH", fm.batch);
          set_knob("TC_QUANT_B32_EVEN", fm.even);
          const double us = time_us(st, [&](int i) {
            a.w = r.weights(i);
            EXPECT_EQ(kq::launch_mma_b32(a, st), TC_SUCCESS) << tc_last_error_message();
          });
          std::printf("  %s %6.1f us (%4.0f GB/s)", fm.label, us, double(bytes) / us / 1e3);
        }
        std::printf("\n");
        std::fflush(stdout);
      }
      set_knob("TC_QUANT_B32_ABLATE", "");
      set_knob("TC_QUANT_B32_WBOX", "");
      set_knob("TC_QUANT_B32_WBATCH", "");
      set_knob("TC_QUANT_B32_EVEN", "");
    }
  }
}

}  // namespace
}  // namespace tc::quant_test
