// `tc bench quant` on CUDA (issue 4): GB/s of weight bytes of each decode kernel (the one the
// table picks for M, and v1 at M = 1) on the hot-weight shape of llama.cpp's harness (W 4096 x
// 14336, one copy, so it sits in the 60 MB L2) and on 4096x4096 / 14336x4096 weights rotated
// through >= 256 MB of copies (streamed from HBM); TFLOP/s of prefill M = 512 through the
// public call (f16 temporaries when 8-bit-class error is allowed, f32 otherwise) next to
// tc_gemm in f16 on the same shape. The bulk GEMV and the f16 MMA (under PDL) also run with X
// given in f16 ("xh"), which they read as it is. Launches are queued from the host one by one;
// the batch-1 bulk GEMVs are also timed as one CUDA graph of consecutive launches ("graph").
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "bench_decode.h"
#include "cuda/quant_kernels.h"
#include "gpu_timer.h"

namespace tc::bench {
namespace {

namespace kq = tc::cuda::quant;

struct DecodeShape {
  const char* label;
  int N, K;
  bool rotate;
  bool graph;  // batch-1 GEMVs also timed as one CUDA graph of consecutive launches
};
// The last shape (302-570 MB of weights, one launch) gives a kernel's streaming rate without
// the per-launch fixed costs that weigh on the small shapes (so no graph figure).
constexpr DecodeShape kShapes[] = {{"hot 4096x14336", 4096, 14336, false, true},
                                   {"rotated 4096x4096", 4096, 4096, true, true},
                                   {"rotated 14336x4096", 14336, 4096, true, true},
                                   {"stream 131072x4096", 131072, 4096, false, false}};

struct Buf {
  tc_buffer_t* b = nullptr;
  explicit Buf(tc_context_t* ctx, size_t bytes) {
    if (tc_buffer_alloc(ctx, bytes, &b) != TC_SUCCESS) b = nullptr;
  }
  ~Buf() {
    if (b) tc_buffer_free(b);
  }
  Buf(const Buf&) = delete;
  uint8_t* ptr() const { return static_cast<uint8_t*>(tc_buffer_device_ptr(b)); }
};

struct Kernel {
  const char* name;
  bool (*supports)(const kq::Args&, std::string&);
  tc_status_t (*launch)(const kq::Args&, void*);
  bool pdl = false;  // back-to-back launches under programmatic dependent launch, as in decode
  tc_dtype_t xt = TC_DTYPE_F32;  // X given in f32, or in f16 (read as it is: half the bytes)
};
bool any(const kq::Args&, std::string&) {
  return true;
}
// In the order of the dispatch table's CUDA decode rows.
const Kernel kKernels[] = {
    {"cuda_gemv_bulk (x8)", kq::gemv_bulk_supports, kq::launch_gemv_bulk},
    {"cuda_gemv_bulk+pdl (x8)", kq::gemv_bulk_supports, kq::launch_gemv_bulk, true},
    {"cuda_gemv_bulk+pdl (xh 8)", kq::gemv_bulk_supports, kq::launch_gemv_bulk, true, TC_DTYPE_F16},
    {"cuda_mma_f16 (x16)", kq::mma_f16_supports, kq::launch_mma_f16},
    {"cuda_mma_f16+pdl (x16)", kq::mma_f16_supports, kq::launch_mma_f16, true},
    {"cuda_mma_f16+pdl (xh 16)", kq::mma_f16_supports, kq::launch_mma_f16, true, TC_DTYPE_F16},
    {"cuda_mma_bulk (x8)", kq::mma_bulk_supports, kq::launch_mma_bulk},
    {"cuda_mma_bulk+pdl (x8)", kq::mma_bulk_supports, kq::launch_mma_bulk, true},
    {"cuda_gemv_staged_q8 (x8)", kq::gemv_staged_q8_supports, kq::launch_gemv_staged_q8},
    {"cuda_gemv_q8_dp4a (x8)", kq::gemv_q8_supports, kq::launch_gemv_q8},
    {"cuda_gemv_staged_f32", kq::gemv_staged_supports, kq::launch_gemv_staged},
    {"cuda_gemv_quant_f32", kq::gemv_supports, kq::launch_gemv},
    {"cuda_mma_quant_batch", kq::mma_supports, kq::launch_mma},
    {"cuda_quant_v1", any, kq::launch_v1}};

// Median ms of the public call (which synchronizes) on the context's own queue.
// The public calls run on the context's own queue and return when done, so events recorded on
// `st` would bracket none of their work (the first GPU run read 46976 TFLOP/s that way): time
// them on the host instead, the same way for the f16 reference and the quantized rows.
double time_public(cudaStream_t st, double seconds, const std::function<tc_status_t()>& call) {
  cudaStreamSynchronize(st);
  if (call() != TC_SUCCESS) return -1;  // warm-up (autotuning, workspace)
  std::vector<double> t;
  double total_ms = 0;
  while (t.size() < 5 || (total_ms < seconds * 1e3 && t.size() < 500)) {
    const auto t0 = std::chrono::steady_clock::now();
    if (call() != TC_SUCCESS) return -1;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    t.push_back(ms);
    total_ms += ms;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

nlohmann::json run_quant_kernel_bench(tc_context_t* ctx, const QuantKernelBenchOptions& o) {
  nlohmann::json doc = {{"bench", "quant"},
                        {"decode", nlohmann::json::array()},
                        {"prefill", nlohmann::json::array()}};
  tc_stream_t* stream = nullptr;
  if (tc_stream_create(ctx, &stream) != TC_SUCCESS) return doc;
  auto st = static_cast<cudaStream_t>(tc_stream_native_handle(stream));
  const double copy = copy_bandwidth_gbps(ctx, st);
  tc_context_trim(ctx);
  doc["copy_gbps"] = copy;
  fmt::print("decode kernels, GB/s of weight bytes (copy bandwidth {:.0f} GB/s in this run)\n",
             copy);
  fmt::print("{:>6} | {:>19} | {:>3} | {:>25} | {:>9} | {:>7} | {:>6}\n", "format", "shape", "M",
             "kernel", "us", "GB/s", "% copy");
  // TC_BENCH_QUANT_ONLY=text: only the decode kernels whose name contains it, and no prefill
  // (quick A/B runs of one kernel's knobs).
  const char* only = std::getenv("TC_BENCH_QUANT_ONLY");
  for (const std::string& name : o.formats) {
    const tc_dtype_t f = quant_format_from_name(name);
    for (const DecodeShape& sh : kShapes) {
      const size_t bytes = tc_quant_row_bytes(f, sh.K) * sh.N;
      const size_t copies = sh.rotate ? std::max<size_t>(2, (size_t(256) << 20) / bytes + 1) : 1;
      kq::Args wa;  // workspace of the MMA bulk kernels at M = 32
      wa.M = 32;
      wa.N = sh.N;
      wa.K = sh.K;
      wa.w_dtype = f;
      const size_t work_bytes =
          std::max(kq::mma_bulk_work_bytes(wa), kq::mma_f16_work_bytes_upto(wa));
      Buf w(ctx, bytes * copies), x(ctx, size_t(32) * sh.K * 4), y(ctx, size_t(32) * sh.N * 4),
          work(ctx, work_bytes), xh(ctx, size_t(32) * sh.K * 2);
      if (!w.b || !x.b || !y.b || !work.b || !xh.b) continue;
      kq::launch_fill_random_blocks(f, w.ptr(), int64_t(sh.N) * copies, sh.K, 11, st);
      fill_random(x.ptr(), TC_DTYPE_F32, size_t(32) * sh.K, 12, st);
      fill_random(xh.ptr(), TC_DTYPE_F16, size_t(32) * sh.K, 13, st);
      for (int M : o.ms) {
        kq::Args a;
        a.M = M;
        a.N = sh.N;
        a.K = sh.K;
        a.w_dtype = f;
        a.w = w.ptr();
        a.x = x.ptr();
        a.y = reinterpret_cast<float*>(y.ptr());
        a.work = work.ptr();
        a.work_bytes = work_bytes;
        // Every kernel that can serve this M (the table takes the first), so that the figures
        // say which one should come first; v1 at M = 1 only.
        for (const Kernel& k : kKernels) {
          a.x_dtype = k.xt;
          a.x = k.xt == TC_DTYPE_F32 ? x.ptr() : xh.ptr();
          std::string why;
          if (!k.supports(a, why) || (k.launch == kq::launch_v1 && M != 1)) continue;
          if (only && !std::strstr(k.name, only)) continue;
          a.pdl = k.pdl;
          const double ms = median_ms(
              st,
              [&](int i) {
                a.w = w.ptr() + bytes * (size_t(i) % copies);
                return k.launch(a, st) == TC_SUCCESS;
              },
              o.seconds);
          auto report = [&](double t_ms, const char* timing, const std::string& note) {
            const double gbps = t_ms > 0 ? double(bytes) / (t_ms * 1e-3) / 1e9 : 0;
            fmt::print("{:>6} | {:>19} | {:>3} | {:>25} | {:>9.1f} | {:>7.0f} | {:>5.1f}%{}\n",
                       name, sh.label, M, k.name, t_ms * 1e3, gbps,
                       copy > 0 ? 100 * gbps / copy : 0.0, note);
            std::fflush(stdout);  // a later hang (timeout) keeps the lines so far
            doc["decode"].push_back({{"format", name},
                                     {"shape", sh.label},
                                     {"M", M},
                                     {"kernel", k.name},
                                     {"pdl", k.pdl},
                                     {"x", k.xt == TC_DTYPE_F32 ? "f32" : "f16"},
                                     {"timing", timing},
                                     {"us", t_ms * 1e3},
                                     {"gbps", gbps}});
          };
          report(ms, "queued", "");
          // The batch-1 GEMVs under PDL also from one CUDA graph of consecutive launches
          // (rotated: one over each copy), as a decode step runs them: no host launch gaps,
          // which the queued figure of a 2-7 us launch can include (host-bound: the rotated
          // 4096x4096 cells of every format measured ~6-7 us queued whatever their bytes).
          if (M == 1 && k.pdl && k.launch == kq::launch_gemv_bulk && sh.graph) {
            const int g = sh.rotate ? int(std::min<size_t>(copies, 64)) : 16;
            const double gms = graph_ms(
                st,
                [&] {
                  for (int i = 0; i < g; ++i) {
                    a.w = w.ptr() + bytes * (size_t(i) % copies);
                    if (k.launch(a, st) != TC_SUCCESS) return false;
                  }
                  return true;
                },
                o.seconds);
            if (gms > 0)
              report(gms / g, "graph", fmt::format("  (graph of {} launches)", g));
            else
              fmt::print("{:>6} | {:>19} | {:>3} | {:>25} | graph capture or launch failed\n", name,
                         sh.label, M, k.name);
          }
        }
      }
    }
  }
  if (only) {
    tc_stream_destroy(stream);
    return doc;
  }
  // Prefill through the public API, against the f16 GEMM of the same shape.
  const int M = o.prefill_m, N = 4096, K = 14336;
  const double flop = 2.0 * M * N * K;
  Buf a16(ctx, size_t(M) * K * 2), b16(ctx, size_t(N) * K * 2), c32(ctx, size_t(M) * N * 4),
      x(ctx, size_t(M) * K * 4);
  if (a16.b && b16.b && c32.b && x.b) {
    fill_random(a16.ptr(), TC_DTYPE_F16, size_t(M) * K, 21, st);
    fill_random(b16.ptr(), TC_DTYPE_F16, size_t(N) * K, 22, st);
    fill_random(x.ptr(), TC_DTYPE_F32, size_t(M) * K, 23, st);
    cudaStreamSynchronize(st);
    const tc_gemm_desc gd{
        M, N, K, TC_DTYPE_F16, TC_DTYPE_F16, TC_DTYPE_F32, TC_DTYPE_F32, false, true, 1.0f, 0.0f,
        0, 0, 0};
    const double f16_ms =
        time_public(st, o.seconds, [&] { return tc_gemm(ctx, &gd, a16.b, b16.b, c32.b); });
    const double f16_tf = f16_ms > 0 ? flop / (f16_ms * 1e-3) / 1e12 : 0;
    fmt::print("\nprefill M={} N={} K={}: tc_gemm f16 {:.0f} TFLOP/s ({})\n", M, N, K, f16_tf,
               tc_last_instance());
    fmt::print("{:>6} | {:>5} | {:>44} | {:>8} | {:>7}\n", "format", "act8", "row", "TFLOP/s",
               "x f16");
    for (const std::string& name : o.formats) {
      const tc_dtype_t f = quant_format_from_name(name);
      Buf w(ctx, tc_quant_row_bytes(f, K) * N);
      if (!w.b) continue;
      kq::launch_fill_random_blocks(f, w.ptr(), N, K, 31, st);
      cudaStreamSynchronize(st);
      for (bool act8 : {true, false}) {
        const tc_quant_matmul_desc d{M, N, K, f, TC_DTYPE_F32, TC_DTYPE_F32, act8, 0};
        const double ms = time_public(
            st, o.seconds, [&] { return tc_gemm_quantized(ctx, &d, w.b, nullptr, x.b, c32.b); });
        const double tf = ms > 0 ? flop / (ms * 1e-3) / 1e12 : 0;
        fmt::print("{:>6} | {:>5} | {:>44} | {:>8.1f} | {:>6.2f}x\n", name, act8 ? "yes" : "no",
                   tc_last_instance(), tf, f16_tf > 0 ? tf / f16_tf : 0.0);
        doc["prefill"].push_back({{"format", name},
                                  {"act8", act8},
                                  {"row", tc_last_instance()},
                                  {"tflops", tf},
                                  {"f16_tflops", f16_tf}});
      }
    }
  }
  tc_stream_destroy(stream);
  return doc;
}

}  // namespace tc::bench
