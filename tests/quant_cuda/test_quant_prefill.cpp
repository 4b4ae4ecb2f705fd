// The prefill kernels of src/cuda/quant_prefill_*.cu at launcher level, on their own stream:
//  - the fused Q4 GEMM (launch_prefill_q4_wgmma after launch_prefill_convert_x_f16) against
//    float64 of the dequantized weights, M in {64, 65, 512, 513} (partial X tiles), odd N
//    (partial W tiles), several K, Y and the f16 X poisoned (NaN) before each pair of launches
//    (the fused kernel starts under PDL while the conversion runs: reading X before its
//    griddepcontrol.wait would pick up the poison), in every configuration its knobs select
//    (single CTAs, CTA pairs, no PDL; Q4_K with its scales computed by the consumers, by the
//    helper warps every stage, and by default once per block: K = 256 is one block, 768 wraps
//    the four-stage ring once, 2560 ten times). Bound 1e-3 (the suite's bound for f16
//    temporaries: X and the weights rounded to f16 give ~3e-4);
//  - the bandwidth-written expansions against the quant_v1 ones they replace: identical bits
//    (Q4_0, Q8_0, Q4_K weights; f32 activations), poisoned outputs.
// TC_QUANT_PREFILL_TIMING=1 also prints CUDA-event medians of each piece at the benchmark's
// prefill shape (M 512, N 4096, K 14336), for the performance notes in docs/quant.md.
// Skips without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cuda/quant_kernels.h"
#include "device_inputs.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
};

kq::Args args_for(tc_dtype_t w, int M, int N, int K, const DevMem& wd, const DevMem& xd,
                  const DevMem& yd) {
  kq::Args a;
  a.M = M;
  a.N = N;
  a.K = K;
  a.w_dtype = w;
  a.w = wd.p;
  a.x = xd.p;
  a.y = static_cast<float*>(yd.p);
  a.act8 = true;
  return a;
}

// The fused kernel's A/B knobs (quant_prefill_fused.cu): one configuration = the variables set.
struct KnobSet {
  const char* label;
  std::vector<std::pair<const char*, const char*>> env;
  static constexpr const char* kAll[] = {"TC_QUANT_PREFILL_CLUSTER", "TC_QUANT_PREFILL_PDL",
                                         "TC_QUANT_PREFILL_Q4K_SCALES"};
  void set() const {
    clear();
    for (const auto& [k, v] : env) setenv(k, v, 1);
  }
  static void clear() {
    for (const char* k : kAll) unsetenv(k);
  }
};
// Every configuration of format w: the default (single CTAs, PDL), CTA pairs, no PDL, and the
// format's own variants.
std::vector<KnobSet> fused_forms(tc_dtype_t w) {
  std::vector<KnobSet> f = {{"default", {}},
                            {"cluster 2", {{"TC_QUANT_PREFILL_CLUSTER", "2"}}},
                            {"pdl 0", {{"TC_QUANT_PREFILL_PDL", "0"}}}};
  if (w == TC_DTYPE_Q4_K) {
    f.push_back({"scales 0", {{"TC_QUANT_PREFILL_Q4K_SCALES", "0"}}});
    f.push_back({"scales stage", {{"TC_QUANT_PREFILL_Q4K_SCALES", "stage"}}});
  }
  return f;
}

// Where a failing result differs: the first few (m, n) off by more than 1% of the output rms,
// so that a wrong fragment or tile mapping shows its pattern in the log.
std::string first_mismatches(const std::vector<float>& y, const std::vector<double>& ref, int N) {
  double rms = 0;
  for (double v : ref) rms += v * v;
  rms = std::sqrt(rms / double(ref.size()));
  std::string out;
  int shown = 0, bad = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!(std::fabs(y[i] - ref[i]) <= 0.01 * rms)) {
      if (shown++ < 8)
        out += " (m " + std::to_string(i / N) + ", n " + std::to_string(i % N) + ": " +
               std::to_string(y[i]) + " vs " + std::to_string(ref[i]) + ")";
      ++bad;
    }
  }
  return out + " bad " + std::to_string(bad) + " of " + std::to_string(y.size());
}

TEST(QuantPrefill, FusedQ4MatchesFloat64) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;  // the launchers' device and runtime set-up, as in the public calls
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  Stream st;
  uint32_t seed = 7100;
  int ran = 0;
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q4_K}) {
    // K % 256 == 0: two stages (the ring not yet full), six (a partial second turn), many
    // ring turns (barrier parities wrap).
    const std::vector<int> ks =
        w == TC_DTYPE_Q4_0 ? std::vector<int>{256, 768, 2304} : std::vector<int>{256, 768, 2560};
    for (int M : {64, 65, 512, 513}) {
      for (int K : ks) {
        const int N = M > 100 ? 131 : 257;  // N % 128 != 0: a partial W tile
        if (M > 100 && K > 1000) continue;  // keeps the float64 reference fast
        const Weights wt = make_weights(w, N, K, seed++);
        const Activations a = make_activations(TC_DTYPE_F32, M, K, seed++);
        const std::vector<double> ref = reference(wt, a, M, N, K);
        DevMem wd(wt.bytes.size()), xd(a.bytes()), yd(ref.size() * 4), x16(size_t(M) * K * 2);
        ASSERT_NO_FATAL_FAILURE(upload(wt, a, wd, xd));
        const kq::Args args = args_for(w, M, N, K, wd, xd, yd);
        std::string why;
        ASSERT_TRUE(kq::prefill_q4_wgmma_supports(args, why)) << why;
        for (const KnobSet& form : fused_forms(w)) {
          form.set();
          ASSERT_EQ(cudaMemsetAsync(yd.p, 0xff, ref.size() * 4, st.s), cudaSuccess);  // NaN
          ASSERT_EQ(cudaMemsetAsync(x16.p, 0xff, size_t(M) * K * 2, st.s), cudaSuccess);
          ASSERT_EQ(kq::launch_prefill_convert_x_f16(args, x16.p, st.s), TC_SUCCESS);
          ASSERT_EQ(kq::launch_prefill_q4_wgmma(args, x16.p, st.s), TC_SUCCESS)
              << tc_last_error_message();
          std::vector<float> got(ref.size());
          ASSERT_EQ(cudaMemcpyAsync(got.data(), yd.p, got.size() * 4, cudaMemcpyDeviceToHost, st.s),
                    cudaSuccess);
          ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
          KnobSet::clear();
          EXPECT_LE(rms_scaled(got, ref), 1e-3)
              << "w=" << w << " M=" << M << " N=" << N << " K=" << K << " form=" << form.label
              << first_mismatches(got, ref, N);
          ++ran;
        }
      }
    }
  }
  EXPECT_EQ(ran, 80);  // 10 shapes x (3 Q4_0 forms + 5 Q4_K forms)
}

// The expansions of the f16 prefill row: the same bits as the quant_v1 launchers.
TEST(QuantPrefill, ExpansionsMatchV1Bits) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  Stream st;
  const int M = 65, N = 37, K = 1280;  // K % 256 == 0 for Q4_K; odd M and N
  uint32_t seed = 7300;
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K}) {
    const Weights wt = make_weights(w, N, K, seed++);
    const Activations a = make_activations(TC_DTYPE_F32, M, K, seed++);
    DevMem wd(wt.bytes.size()), xd(a.bytes()), yd(4);
    ASSERT_NO_FATAL_FAILURE(upload(wt, a, wd, xd));
    const kq::Args args = args_for(w, M, N, K, wd, xd, yd);
    const size_t wn = size_t(N) * K, xn = size_t(M) * K;
    DevMem w_old(wn * 2), w_new(wn * 2), x_old(xn * 2), x_new(xn * 2);
    for (const DevMem* m : {&w_old, &w_new, &x_old, &x_new})
      ASSERT_EQ(cudaMemsetAsync(m->p, 0xff, m == &w_old || m == &w_new ? wn * 2 : xn * 2, st.s),
                cudaSuccess);
    ASSERT_EQ(kq::launch_dequant_w(args, true, w_old.p, st.s), TC_SUCCESS);
    ASSERT_EQ(kq::launch_prefill_dequant_w_f16(args, w_new.p, st.s), TC_SUCCESS);
    ASSERT_EQ(kq::launch_convert_x(args, true, x_old.p, st.s), TC_SUCCESS);
    ASSERT_EQ(kq::launch_prefill_convert_x_f16(args, x_new.p, st.s), TC_SUCCESS);
    std::vector<uint16_t> wo(wn), wnw(wn), xo(xn), xnw(xn);
    ASSERT_EQ(cudaMemcpyAsync(wo.data(), w_old.p, wn * 2, cudaMemcpyDeviceToHost, st.s),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(wnw.data(), w_new.p, wn * 2, cudaMemcpyDeviceToHost, st.s),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(xo.data(), x_old.p, xn * 2, cudaMemcpyDeviceToHost, st.s),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(xnw.data(), x_new.p, xn * 2, cudaMemcpyDeviceToHost, st.s),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
    size_t wdiff = 0, xdiff = 0, wnan = 0;
    for (size_t i = 0; i < wn; ++i) {
      wdiff += wo[i] != wnw[i];
      wnan += (wnw[i] & 0x7c00) == 0x7c00;  // the 0xffff poison (or any Inf/NaN)
    }
    for (size_t i = 0; i < xn; ++i) xdiff += xo[i] != xnw[i];
    EXPECT_EQ(wdiff, 0u) << "w=" << w;
    EXPECT_EQ(wnan, 0u) << "w=" << w;
    EXPECT_EQ(xdiff, 0u) << "w=" << w;
  }
}

// CUDA-event median of `launch` (after one warm-up), microseconds.
double median_us(cudaStream_t s, const std::function<void()>& launch) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  launch();
  std::vector<double> t;
  for (int i = 0; i < 15; ++i) {
    cudaEventRecord(e0, s);
    launch();
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(1e3 * ms);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Host-timed median of a call that synchronizes (the public calls), microseconds, over 0.2 s
// as bench quant does; `fastest` (optional) gets the minimum.
double public_us(const std::function<tc_status_t()>& call, double* fastest = nullptr) {
  if (call() != TC_SUCCESS) return -1;
  std::vector<double> t;
  double total = 0;
  while (t.size() < 5 || (total < 2e5 && t.size() < 500)) {
    const auto t0 = std::chrono::steady_clock::now();
    if (call() != TC_SUCCESS) return -1;
    t.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    total += t.back();
  }
  std::sort(t.begin(), t.end());
  if (fastest) *fastest = t[0];
  return t[t.size() / 2];
}

TEST(QuantPrefill, TimingAtBenchShape) {
  if (!std::getenv("TC_QUANT_PREFILL_TIMING")) GTEST_SKIP() << "TC_QUANT_PREFILL_TIMING unset";
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  Stream st;
  const int M = 512, N = 4096, K = 14336;
  const double flop = 2.0 * M * N * K;
  auto tf = [&](double us) { return us > 0 ? flop / (us * 1e-6) / 1e12 : 0.0; };
  tc_buffer_t *xb = nullptr, *yb = nullptr, *ab = nullptr, *bb = nullptr, *wb = nullptr;
  ASSERT_EQ(tc_buffer_alloc(ctx.ctx, size_t(M) * K * 4, &xb), TC_SUCCESS);
  ASSERT_EQ(tc_buffer_alloc(ctx.ctx, size_t(M) * N * 4, &yb), TC_SUCCESS);
  ASSERT_EQ(tc_buffer_alloc(ctx.ctx, size_t(M) * K * 2, &ab), TC_SUCCESS);
  ASSERT_EQ(tc_buffer_alloc(ctx.ctx, size_t(N) * K * 2, &bb), TC_SUCCESS);
  ASSERT_EQ(tc_buffer_alloc(ctx.ctx, size_t(N) * K * 2, &wb), TC_SUCCESS);  // Q8_0 fits too
  std::vector<float> xh(size_t(M) * K);
  for (size_t i = 0; i < xh.size(); ++i) xh[i] = float(int((i * 2654435761u) % 2001) - 1000) / 1000;
  ASSERT_EQ(tc_buffer_write(xb, 0, xh.data(), xh.size() * 4), TC_SUCCESS);
  ASSERT_EQ(cudaMemset(tc_buffer_device_ptr(ab), 0x3c, size_t(M) * K * 2), cudaSuccess);
  ASSERT_EQ(cudaMemset(tc_buffer_device_ptr(bb), 0x31, size_t(N) * K * 2), cudaSuccess);
  const tc_gemm_desc gd{
      M, N, K, TC_DTYPE_F16, TC_DTYPE_F16, TC_DTYPE_F32, TC_DTYPE_F32, false, true, 1.0f, 0.0f,
      0, 0, 0};
  const double gemm_us = public_us([&] { return tc_gemm(ctx.ctx, &gd, ab, bb, yb); });
  std::printf("prefill timing M=%d N=%d K=%d (us; TFLOP/s where a whole matmul)\n", M, N, K);
  std::printf("  tc_gemm f16 public %.1f us %.0f TFLOP/s (%s)\n", gemm_us, tf(gemm_us),
              tc_last_instance());
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K}) {
    ASSERT_EQ(kq::launch_fill_random_blocks(w, tc_buffer_device_ptr(wb), N, K, 31, st.s),
              TC_SUCCESS);
    kq::Args a;
    a.M = M;
    a.N = N;
    a.K = K;
    a.w_dtype = w;
    a.w = tc_buffer_device_ptr(wb);
    a.x = tc_buffer_device_ptr(xb);
    a.y = static_cast<float*>(tc_buffer_device_ptr(yb));
    void* w16 = tc_buffer_device_ptr(bb);
    void* x16 = tc_buffer_device_ptr(ab);
    const double dq_old = median_us(st.s, [&] { kq::launch_dequant_w(a, true, w16, st.s); });
    const double dq_new = median_us(st.s, [&] { kq::launch_prefill_dequant_w_f16(a, w16, st.s); });
    const double cx_old = median_us(st.s, [&] { kq::launch_convert_x(a, true, x16, st.s); });
    const double cx_new = median_us(st.s, [&] { kq::launch_prefill_convert_x_f16(a, x16, st.s); });
    std::printf(
        "  w=%d dequant-W f16: v1 %.1f us, new %.1f us (%.0f GB/s); convert-X: v1 %.1f, "
        "new %.1f us\n",
        int(w), dq_old, dq_new,
        (double(N) * K * 2 + double(tc_quant_row_bytes(w, K)) * N) / (dq_new * 1e3), cx_old,
        cx_new);
    std::string why;
    if (kq::prefill_q4_wgmma_supports(a, why)) {
      // Each configuration twice, interleaved (A B C A B C), so that a clock drift during the
      // loop shows as a difference between the two passes rather than between forms.
      for (int pass = 0; pass < 2; ++pass) {
        for (const KnobSet& form : fused_forms(w)) {
          form.set();
          const double fused = median_us(st.s, [&] { kq::launch_prefill_q4_wgmma(a, x16, st.s); });
          const double both = median_us(st.s, [&] {
            kq::launch_prefill_convert_x_f16(a, x16, st.s);
            kq::launch_prefill_q4_wgmma(a, x16, st.s);
          });
          KnobSet::clear();
          std::printf(
              "  w=%d %-12s fused GEMM %.1f us %.0f TFLOP/s; with convert-X %.1f us "
              "%.0f TFLOP/s\n",
              int(w), form.label, fused, tf(fused), both, tf(both));
        }
      }
    }
    ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
    if (kq::prefill_q4_wgmma_supports(a, why)) {  // the row's launches, host-timed as below
      const double direct = public_us([&] {
        kq::launch_prefill_convert_x_f16(a, x16, st.s);
        kq::launch_prefill_q4_wgmma(a, x16, st.s);
        return cudaStreamSynchronize(st.s) == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
      });
      std::printf("  w=%d convert-X + fused launched directly, host-timed: %.1f us\n", int(w),
                  direct);
    }
    const tc_quant_matmul_desc d{M, N, K, w, TC_DTYPE_F32, TC_DTYPE_F32, true, 0};
    double fastest = 0;
    const double pub =
        public_us([&] { return tc_gemm_quantized(ctx.ctx, &d, wb, nullptr, xb, yb); }, &fastest);
    std::printf(
        "  w=%d public tc_gemm_quantized %.1f us (fastest %.1f) %.0f TFLOP/s %.2fx f16 (%s)\n",
        int(w), pub, fastest, tf(pub), pub > 0 ? gemm_us / pub : 0.0, tc_last_instance());
    EXPECT_GT(pub, 0);
  }
  std::printf("  tc_gemm f16 public again %.1f us\n",
              public_us([&] { return tc_gemm(ctx.ctx, &gd, ab, bb, yb); }));
  // The fixed cost of a public call: tiny shapes through each kind of row (the same buffers).
  tc_gemm_desc tiny = gd;
  tiny.M = 512;
  tiny.N = tiny.K = 128;
  std::printf("  tiny tc_gemm f16 512x128x128: %.1f us\n",
              public_us([&] { return tc_gemm(ctx.ctx, &tiny, ab, bb, yb); }));
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0}) {
    for (int m : {1, 512}) {
      const tc_quant_matmul_desc d{m, 128, 256, w, TC_DTYPE_F32, TC_DTYPE_F32, true, 0};
      const double us =
          public_us([&] { return tc_gemm_quantized(ctx.ctx, &d, wb, nullptr, xb, yb); });
      std::printf("  tiny tc_gemm_quantized w=%d M=%d N=128 K=256: %.1f us (%s)\n", int(w), m, us,
                  tc_last_instance());
    }
  }
  for (tc_buffer_t* b : {xb, yb, ab, bb, wb}) tc_buffer_free(b);
}

}  // namespace
}  // namespace tc::quant_test
