// Quantized GEMV on the CPU: GB/s of weight bytes for each format and activation mode, next to
// the read bandwidth all cores reach on a plain streaming sum. Weights rotate through copies
// totalling >= 256 MiB so each call streams them from memory, as in a real decode step.
#include "bench_quant_cpu.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

namespace tc::bench {
namespace {

using Clock = std::chrono::steady_clock;

__attribute__((target("avx2"))) float sum_range(const float* p, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
  }
  alignas(32) float t[8];
  _mm256_store_ps(t, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}

double stream_read_gbps() {
  const size_t n = size_t{1} << 28;  // 1 GiB of floats
  float* buf = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {  // first touch in parallel
    pool.emplace_back(
        [&, t] { std::fill(buf + n / threads * t, buf + n / threads * (t + 1), 1.0f); });
  }
  for (auto& th : pool) th.join();
  double best = 0;
  volatile float sink = 0;
  for (int rep = 0; rep < 3; ++rep) {
    pool.clear();
    std::vector<float> part(threads);
    const auto t0 = Clock::now();
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] { part[t] = sum_range(buf + n / threads * t, n / threads); });
    }
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    for (float v : part) sink = sink + v;
    best = std::max(best, n * sizeof(float) / s / 1e9);
  }
  std::free(buf);
  return best;
}

struct Case {
  tc_dtype_t w;
  const char* name;
};

}  // namespace

bool bench_quant_cpu(int N, int K, const std::vector<int>& ms, double seconds_per_case,
                     QuantBenchReport* out) {
  out->stream_gbps = stream_read_gbps();
  tc_context_t* ctx = nullptr;
  if (tc_context_create(&ctx, TC_DEVICE_CPU) != TC_SUCCESS) return false;
  const int max_m = *std::max_element(ms.begin(), ms.end());
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  std::vector<float> wf(static_cast<size_t>(N) * K), xf(static_cast<size_t>(max_m) * K);
  for (auto& v : wf) v = nd(rng);
  for (auto& v : xf) v = nd(rng);
  bool ok = true;
  tc_buffer_t *X = nullptr, *Y = nullptr;
  ok = tc_buffer_alloc(ctx, xf.size() * 4, &X) == TC_SUCCESS &&
       tc_buffer_write(X, 0, xf.data(), xf.size() * 4) == TC_SUCCESS &&
       tc_buffer_alloc(ctx, static_cast<size_t>(max_m) * N * 4, &Y) == TC_SUCCESS;
  for (Case c :
       {Case{TC_DTYPE_Q4_0, "q4_0"}, Case{TC_DTYPE_Q8_0, "q8_0"}, Case{TC_DTYPE_Q4_K, "q4_k"}}) {
    if (!ok) break;
    const size_t bytes = tc_quant_row_bytes(c.w, K) * N;
    std::vector<uint8_t> q(bytes);
    ok = tc_quantize(c.w, wf.data(), N, K, q.data(), q.size()) == TC_SUCCESS;
    const size_t copies = std::max<size_t>(2, (size_t{256} << 20) / bytes + 1);
    std::vector<tc_buffer_t*> W(copies, nullptr);
    for (auto& b : W) {
      ok = ok && tc_buffer_alloc(ctx, bytes, &b) == TC_SUCCESS &&
           tc_buffer_write(b, 0, q.data(), bytes) == TC_SUCCESS;
    }
    for (int M : ms) {
      for (bool act8 : {false, true}) {
        if (!ok) break;
        tc_quant_matmul_desc d{M, N, K, c.w, TC_DTYPE_F32, TC_DTYPE_F32, act8, 0.0f};
        std::vector<double> times;
        size_t i = 0;
        const auto start = Clock::now();
        while (ok &&
               (times.size() < 5 ||
                std::chrono::duration<double>(Clock::now() - start).count() < seconds_per_case)) {
          const auto t0 = Clock::now();
          ok = tc_gemv_quantized(ctx, &d, W[i++ % copies], nullptr, X, Y) == TC_SUCCESS;
          times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        }
        if (!ok) break;
        std::sort(times.begin(), times.end());
        const double t = times[times.size() / 2];
        out->rows.push_back({c.name, tc_last_instance(), M, N, K, act8, t * 1e6, bytes / t / 1e9});
      }
    }
    for (auto* b : W) tc_buffer_free(b);
  }
  tc_buffer_free(X);
  tc_buffer_free(Y);
  tc_context_destroy(ctx);
  return ok;
}

void print_quant_report(const QuantBenchReport& r, std::FILE* f) {
  std::fprintf(f, "streaming read, all cores: %.1f GB/s\n", r.stream_gbps);
  std::fprintf(f, "%-6s %-28s %3s %6s %6s %-5s %9s %7s %7s\n", "format", "instance", "M", "N", "K",
               "act", "us", "GB/s", "%read");
  for (const auto& row : r.rows) {
    std::fprintf(f, "%-6s %-28s %3d %6d %6d %-5s %9.1f %7.1f %6.0f%%\n", row.format.c_str(),
                 row.instance.c_str(), row.M, row.N, row.K, row.act8 ? "8bit" : "f32", row.us,
                 row.gbps, 100 * row.gbps / r.stream_gbps);
  }
}

}  // namespace tc::bench

#ifdef TC_BENCH_QUANT_MAIN
#include <cstdlib>
// bench_quant_cpu [N K [seconds [M,M,...]]]: the standalone form until `tc bench quant` calls it.
int main(int argc, char** argv) {
  const int N = argc > 2 ? std::atoi(argv[1]) : 4096;
  const int K = argc > 2 ? std::atoi(argv[2]) : 4096;
  const double secs = argc > 3 ? std::atof(argv[3]) : 1.0;
  std::vector<int> ms = {1, 4, 8};
  if (argc > 4) {
    ms.clear();
    for (const char* p = argv[4]; *p;) {
      ms.push_back(std::atoi(p));
      while (*p && *p != ',') ++p;
      if (*p == ',') ++p;
    }
  }
  tc::bench::QuantBenchReport r;
  if (!tc::bench::bench_quant_cpu(N, K, ms, secs, &r)) {
    std::fprintf(stderr, "error: %s\n", tc_last_error_message());
    return 1;
  }
  tc::bench::print_quant_report(r, stdout);
  return 0;
}
#endif
