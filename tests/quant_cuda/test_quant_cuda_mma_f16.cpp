// The f16 MMA bulk kernel (launch_mma_f16, src/cuda/quant_mma_f16.cu) on its own, against
// float64 of the dequantized weights, with Y poisoned (NaN) before every launch: every format,
// every M 1..32 (33 is refused), odd N, the K splits (X of all K does not fit beside the ring:
// CTAs take a K range each, the last to finish a pass adds the partial sums; also forced on
// smaller K), many passes per CTA (ring slots reused, barrier parity wrapping), a partial last
// pass; launched twice back to back, the second under PDL (the same bits). Every case runs
// both the X-in-registers kernel (quant_mma_xreg.cu, where it fits) and the pass-barrier one:
// the same bits where the former splits no K (M <= 8, K <= 4096: XU = 1..4 units of X per
// warp, every warp reducing passes); its 2- and 4-CTA clusters for M 8, 13, 24 (the latter two
// only with TC_QUANT_F16_XREG_MAXM=32, which the test sets). Bound 1e-3: X and the dequantized
// weights are rounded to f16 (~3e-4 expected; at M <= 8 Q4_0 / Q8_0 only X, the block scales
// applied to the sums in f32), the bound the rows test applies to f16 temporaries;
// a wrong fragment order or a missed scale gives errors of order 1. Skips without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/quant_kernels.h"
#include "device_inputs.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

std::vector<LaunchCase> cases() {
  std::vector<LaunchCase> out;
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K}) {
    for (int M = 1; M <= 32; ++M) out.push_back({w, M, M % 2 ? 131 : 67, M % 3 ? 512 : 1280});
    out.push_back({w, 8, 67, 11008});   // one column tile, 2 K splits
    out.push_back({w, 16, 37, 11008});  // two column tiles, K splits
    out.push_back({w, 32, 257, 4096});  // four column tiles, K splits
    out.push_back({w, 5, 20011, 256});  // ~10 passes per CTA: slots reused many times
    out.push_back({w, 8, 2115, 4096});  // M <= 8, K 4096: X in registers, the whole ring
  }
  out.push_back({TC_DTYPE_Q4_0, 4, 12677, 4096});  // 6 passes per CTA: ring and slots wrap
  out.push_back({TC_DTYPE_Q4_K, 3, 40009, 256});   // ~19 passes per CTA: every warp reduces
  out.push_back({TC_DTYPE_Q8_0, 6, 2053, 3072});   // 3 units of X per warp
  out.push_back({TC_DTYPE_Q4_0, 8, 2113, 11008});  // 2-CTA clusters, 2 passes each
  out.push_back({TC_DTYPE_Q4_K, 13, 1501, 4096});  // M <= 16: 2-CTA clusters
  out.push_back({TC_DTYPE_Q4_K, 24, 2007, 4096});  // M <= 32: 4-CTA clusters, ~4 passes each
  out.push_back({TC_DTYPE_Q4_0, 32, 1001, 2048});  // a partial last pass, 4 column tiles
  return out;
}

TEST(QuantCudaMmaF16, MatchesFloat64) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;  // the launchers' device and runtime set-up, as in the public calls
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  uint32_t seed = 7100;
  int ran = 0;
  for (const LaunchCase& c : cases()) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    const Activations a = make_activations(TC_DTYPE_F32, c.M, c.K, seed++);
    const std::vector<double> ref = reference(wt, a, c.M, c.N, c.K);
    DevMem w(wt.bytes.size()), x(a.bytes()), y(ref.size() * 4);
    ASSERT_NO_FATAL_FAILURE(upload(wt, a, w, x));
    // As chosen, then with K split in 3 between CTAs where K allows (the A/B knob): the
    // partial sums and the last-arriver fixup on every shape, not only the widest. Where it
    // fits, "as chosen" is the X-in-registers kernel (quant_mma_xreg.cu), "x0" the
    // pass-barrier kernel (TC_QUANT_F16_XREG=0); at M <= 8, K <= 4096 (no cluster K split) both
    // sum in the same order: the same bits.
    std::vector<float> first;
    KnobScope scope;  // unset after the case, also when an assertion ends it
    for (const char* splits : {"", "x0", "3"}) {
      if (*splits == '3' && c.K < 768) continue;
      scope.set("TC_QUANT_F16_SPLITS", *splits == '3' ? splits : "");
      scope.set("TC_QUANT_F16_XREG", *splits == 'x' ? "0" : "1");
      scope.set("TC_QUANT_F16_XREG_MAXM", "32");  // its clusters too (the rows stop at M 8)
      const size_t work_bytes = kq::mma_f16_work_bytes(launch_args(c, w, x, y));
      DevMem work(std::max<size_t>(work_bytes, 16));  // none needed without K splits
      kq::Args args = launch_args(c, w, x, y, work.p, work_bytes);
      std::string why;
      ASSERT_TRUE(kq::mma_f16_supports(args, why))
          << why << " w=" << c.w << " M=" << c.M << " N=" << c.N << " K=" << c.K;
      for (int rep = 0; rep < 2; ++rep) {
        args.pdl = rep == 1;
        ASSERT_EQ(cudaMemsetAsync(y.p, 0xff, ref.size() * 4, st), cudaSuccess);
        ASSERT_EQ(kq::launch_mma_f16(args, st), TC_SUCCESS) << tc_last_error_message();
        std::vector<float> got(ref.size());
        ASSERT_EQ(cudaMemcpyAsync(got.data(), y.p, got.size() * 4, cudaMemcpyDeviceToHost, st),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
        EXPECT_LE(rms_scaled(got, ref), 1e-3)
            << "w=" << c.w << " M=" << c.M << " N=" << c.N << " K=" << c.K << " pdl=" << args.pdl
            << " knob=" << splits;
        if (*splits == 0) {
          if (rep == 0) first = got;
          EXPECT_TRUE(got == first) << "repeat differs: w=" << c.w << " M=" << c.M << " N=" << c.N;
        } else if (*splits == 'x' && c.M <= 8 && c.K <= 4096) {
          EXPECT_TRUE(got == first) << "xreg and pass-barrier kernels differ: w=" << c.w
                                    << " M=" << c.M << " N=" << c.N << " K=" << c.K;
        }
      }
    }
    ++ran;
  }
  cudaStreamDestroy(st);
  EXPECT_EQ(ran, int(cases().size()));
}

// What the kernel does not serve is refused with a reason, before anything is queued.
TEST(QuantCudaMmaF16, RefusesWhatItCannotServe) {
  kq::Args a;
  a.M = 8;
  a.N = 64;
  a.K = 1024;
  a.w_dtype = TC_DTYPE_Q4_0;
  a.w = a.x = reinterpret_cast<void*>(uintptr_t(256));
  a.y = reinterpret_cast<float*>(uintptr_t(256));
  a.work = reinterpret_cast<void*>(uintptr_t(256));
  a.work_bytes = kq::mma_f16_work_bytes(a);
  std::string why;
  EXPECT_TRUE(kq::mma_f16_supports(a, why)) << why;
  kq::Args b = a;
  b.M = 33;
  EXPECT_FALSE(kq::mma_f16_supports(b, why));
  b = a;
  b.K = 1056;  // rows not a multiple of 16 bytes
  EXPECT_FALSE(kq::mma_f16_supports(b, why));
  b = a;  // K split (X of all K too large for shared memory): a workspace is needed
  b.M = 32;
  b.K = 4096;
  b.work_bytes = kq::mma_f16_work_bytes(b);
  ASSERT_GT(b.work_bytes, 0u);
  EXPECT_TRUE(kq::mma_f16_supports(b, why)) << why;
  b.work_bytes -= 16;
  EXPECT_FALSE(kq::mma_f16_supports(b, why));
  b.work = nullptr;
  EXPECT_FALSE(kq::mma_f16_supports(b, why));
  b = a;
  b.w_dtype = TC_DTYPE_Q6_K;
  EXPECT_FALSE(kq::mma_f16_supports(b, why));
  b = a;
  b.x = reinterpret_cast<void*>(uintptr_t(264));  // not 16-byte aligned
  EXPECT_FALSE(kq::mma_f16_supports(b, why));
}

}  // namespace
}  // namespace tc::quant_test
