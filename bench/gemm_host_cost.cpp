// tc_gemm_host_cost (contract in gemm_host_cost.h). Host time of a call: a burst of 100 calls
// timed with the wall clock after the stream drained (the GPU's queue absorbs the burst). Per
// case, 21 rounds of one burst of each side (tc tuned, tc's own kernels with TC_AUTOTUNE=0,
// cuBLASLt called directly, an empty kernel with the parameters of tc's wgmma kernels) in
// rotating order; A and B rotate over 16 copies, as the benchmark's do.
#include "gemm_host_cost.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <tc/tc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cublaslt_peer.h"
#include "cuda/tile/tma_host.h"
#include "gemm_cases.h"
#include "gpu_timer.h"

namespace {

using Clock = std::chrono::steady_clock;
using tc::bench::launch_empty_probe;

// Median host microseconds per call over `bursts` bursts of `calls` calls; *gpu_us (when asked) the
// median GPU microseconds per call of the same bursts (CUDA events around each): a GPU time
// above the host's says the host was not what bounded the burst.
template <class F>
double burst_us(cudaStream_t s, F&& call, int calls = 100, double* gpu_us = nullptr,
                int bursts = 15) {
  std::vector<double> v, g;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  int i = 0;
  bool ok = true;
  for (int b = 0; b < bursts && ok; ++b) {
    ok = cudaStreamSynchronize(s) == cudaSuccess;
    cudaEventRecord(e0, s);
    const auto t0 = Clock::now();
    for (int k = 0; k < calls && ok; ++k) ok = call(i++);
    v.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
    cudaEventRecord(e1, s);
    float ms = 0;
    ok = ok && cudaEventSynchronize(e1) == cudaSuccess &&
         cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
    g.push_back(1e3 * ms / calls);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (!ok) return -1;
  std::sort(v.begin(), v.end());
  std::sort(g.begin(), g.end());
  if (gpu_us) *gpu_us = g[g.size() / 2];
  return v[v.size() / 2];
}

template <class F>
double ns_per(int n, F&& f) {
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) f(i);
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n;
}

void primitives(cudaStream_t s) {
  int n_env = 0;
  for (char** e = environ; *e; ++e) ++n_env;
  volatile const char* sink = nullptr;
  const double ge = ns_per(200000, [&](int) { sink = getenv("TC_WGMMA_SWAP"); });
  int dev = 0;
  const double gd = ns_per(200000, [&](int) { cudaGetDevice(&dev); });
  void* p = nullptr;
  cudaMalloc(&p, 1 << 24);
  // The driver's encoder itself (tc's tma_encode_3d may answer from its cache).
  tc::tile::TmaMap m{};
  auto encoder = tc::tile::tma_encoder();
  double enc = -1;
  if (encoder) {
    enc = ns_per(20000, [&](int i) {
      cuuint64_t dims[3] = {1024, 1024, 1}, strides[2] = {2048, 2048 * 1024};
      cuuint32_t box[3] = {64, 128, 1}, estr[3] = {1, 1, 1};
      encoder(reinterpret_cast<CUtensorMap*>(&m), CU_TENSOR_MAP_DATA_TYPE_UINT16, 3,
              static_cast<char*>(p) + 256 * (i % 64), dims, strides, box, estr,
              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    });
  }
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  double rep = -1;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapReplaceAddress", &fn, 12000, cudaEnableDefault,
                                       &q) == cudaSuccess &&
      q == cudaDriverEntryPointSuccess) {
    auto replace = reinterpret_cast<PFN_cuTensorMapReplaceAddress_v12000>(fn);
    rep = ns_per(20000, [&](int i) {
      replace(reinterpret_cast<CUtensorMap*>(&m), static_cast<char*>(p) + 256 * (i % 64));
    });
  }
  std::string name;
  const double str = ns_per(20000, [&](int i) {
    name = std::string("gemm_wgmma_") + "f16_f32" + "_" + "n" + "t" + "_bm" +
           std::to_string(128 + (i & 1)) + "_bn" + std::to_string(256) + "_bk" +
           std::to_string(64) + "_s" + std::to_string(4) + "_aligned";
  });
  const double l0 = burst_us(s, [&](int) { return launch_empty_probe(s, false) == cudaSuccess; });
  const double l1 = burst_us(s, [&](int) { return launch_empty_probe(s, true) == cudaSuccess; });
  const double l20 = burst_us(
      s, [&](int) { return launch_empty_probe(s, true) == cudaSuccess; }, 20);
  fmt::print(
      "primitives: environ {} entries; getenv (unset) {:.0f} ns; cudaGetDevice {:.0f} ns; "
      "cuTensorMapEncodeTiled {:.0f} ns; cuTensorMapReplaceAddress {:.0f} ns; plan-name string "
      "{:.0f} ns; empty kernel cudaLaunchKernelEx {:.2f} us, with PDL {:.2f} us (x20 {:.2f})\n",
      n_env, ge, gd, enc, rep, str, l0, l1, l20);
  cudaFree(p);
  (void)sink;
}

struct Bufs {
  std::vector<tc_buffer_t*> a, b;
  tc_buffer_t* c = nullptr;
  ~Bufs() {
    for (auto* x : a) tc_buffer_free(x);
    for (auto* x : b) tc_buffer_free(x);
    if (c) tc_buffer_free(c);
  }
};

void run_case(tc_context_t* ctx, tc_stream_t* stream, tc::bench::CublasLtPeer& peer,
              const std::string& dt, int n, bool tb) {
  constexpr int kRot = 16;
  auto s = static_cast<cudaStream_t>(tc_stream_native_handle(stream));
  tc_dtype_t in, out, acc;
  tc::bench::case_dtypes(dt, &in, &out, &acc);
  const size_t es = tc_dtype_size(in), nn = size_t(n) * n;
  Bufs bufs;
  for (int i = 0; i < kRot; ++i) {
    tc_buffer_t *a = nullptr, *b = nullptr;
    if (tc_buffer_alloc(ctx, nn * es, &a) != TC_SUCCESS ||
        tc_buffer_alloc(ctx, nn * es, &b) != TC_SUCCESS) {
      fmt::print("{} {}: allocation failed\n", dt, n);
      return;
    }
    bufs.a.push_back(a);
    bufs.b.push_back(b);
    tc::bench::fill_random(tc_buffer_device_ptr(a), in, nn, 2 * i + 1, s);
    tc::bench::fill_random(tc_buffer_device_ptr(b), in, nn, 2 * i + 2, s);
  }
  if (tc_buffer_alloc(ctx, nn * tc_dtype_size(out), &bufs.c) != TC_SUCCESS) return;
  cudaStreamSynchronize(s);
  const tc_gemm_desc d{n, n, n, in, in, out, acc, false, tb, 1.0f, 0.0f, 0, 0, 0};
  auto tc_call = [&](int rot) {
    return [&, rot](int i) {
      const int k = rot ? i % kRot : 0;
      return tc_gemm_async(ctx, &d, bufs.a[k], bufs.b[k], bufs.c, stream) == TC_SUCCESS;
    };
  };
  auto first = [&]() -> std::string {
    if (tc_gemm(ctx, &d, bufs.a[0], bufs.b[0], bufs.c) != TC_SUCCESS)
      return std::string("failed: ") + tc_last_error_message();
    return tc_last_instance();
  };
  const std::string label = fmt::format("{}{} {}^3", dt, tb && dt != "i8" ? "nt" : "", n);
  unsetenv("TC_AUTOTUNE");
  const std::string tuned = first();
  setenv("TC_AUTOTUNE", "0", 1);
  const std::string own = first();
  unsetenv("TC_AUTOTUNE");
  std::string why;
  if (!peer.prepare({n, n, n, 1, in, out, acc, false, tb}, &why)) {
    fmt::print("{}: no peer ({})\n", label, why);
    return;
  }
  auto peer_call = [&](int i) {
    const int k = i % kRot;
    return peer.run(tc_buffer_device_ptr(bufs.a[k]), tc_buffer_device_ptr(bufs.b[k]),
                    tc_buffer_device_ptr(bufs.c), s);
  };
  // Interleaved: one burst of each side per round, in rotating order, so that the host's drift
  // (its speed moved by 1.5x within one process in the 00:35 run) weighs on all sides alike;
  // the differences are medians of the per-round differences.
  enum { kTuned, kOwn, kPeer, kFloor, kSides };
  std::vector<double> t[kSides];
  for (int r = 0; r < 21; ++r) {
    for (int j = 0; j < kSides; ++j) {
      const int side = (r + j) % kSides;
      double us = -1;
      if (side == kTuned || side == kOwn) {
        if (side == kOwn) setenv("TC_AUTOTUNE", "0", 1);
        us = burst_us(s, tc_call(1), 100, nullptr, 1);
        unsetenv("TC_AUTOTUNE");
      } else if (side == kPeer) {
        us = burst_us(s, peer_call, 100, nullptr, 1);
      } else {
        us = burst_us(
            s, [&](int) { return launch_empty_probe(s, true) == cudaSuccess; }, 100, nullptr, 1);
      }
      t[side].push_back(us);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  auto diff = [&](int x, int y) {
    std::vector<double> v;
    for (size_t i = 0; i < t[x].size(); ++i) v.push_back(t[x][i] - t[y][i]);
    return median(v);
  };
  double gpu = -1;
  burst_us(s, tc_call(1), 100, &gpu);
  fmt::print(
      "{:<12} tuned {:5.2f}  own {:5.2f}  peer {:5.2f}  empty launch {:5.2f}  | tuned-peer "
      "{:+5.2f}  own-peer {:+5.2f}  own-empty {:+5.2f}  (tuned's GPU {:5.2f} us/call) | tuned {} | "
      "own {}\n",
      label, median(t[kTuned]), median(t[kOwn]), median(t[kPeer]), median(t[kFloor]),
      diff(kTuned, kPeer), diff(kOwn, kPeer), diff(kOwn, kFloor), gpu, tuned, own);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {256, 512, 1024};
  if (argc > 1) sizes = {atoi(argv[1])};
  tc_context_t* ctx = nullptr;
  if (tc_context_create(&ctx, TC_DEVICE_CUDA) != TC_SUCCESS) {
    fmt::print("no CUDA context: {}\n", tc_last_error_message());
    return 1;
  }
  cudaSetDevice(0);
  tc_stream_t* stream = nullptr;
  if (tc_stream_create(ctx, &stream) != TC_SUCCESS) return 1;
  auto s = static_cast<cudaStream_t>(tc_stream_native_handle(stream));
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  fmt::print("tc_gemm_host_cost {}; host us per call (medians of 21 interleaved rounds)\n", date);
  primitives(s);
  tc::bench::CublasLtPeer peer;
  for (int n : sizes)
    for (const char* dt : {"f16", "bf16", "i8", "tf32"})
      run_case(ctx, stream, peer, dt, n, std::string(dt) == "i8");  // i8 NT, as the bench
  for (int n : sizes) run_case(ctx, stream, peer, "f16", n, true);
  primitives(s);
  tc_stream_destroy(stream);
  tc_context_destroy(ctx);
  return 0;
}
