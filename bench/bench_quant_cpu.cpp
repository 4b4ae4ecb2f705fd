// Quantized GEMV on the CPU: GB/s of weight bytes for each format and activation mode, next to
// the read bandwidth all cores reach on a plain streaming sum measured in the same run. Weights
// rotate through copies totalling >= 256 MiB so each call streams them from memory, as in a
// real decode step. On a shared machine the median moves with other people's load; the best
// repetition (of both the GEMV and the streaming read, in chunks of the same size) is the
// figure to compare, and %read is best against best.
#include "bench_quant_cpu.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
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

// The read bandwidth of all cores on the same footing as a GEMV call: each repetition sums
// `chunk` bytes (split over the threads) at the next offset of a 512 MiB buffer, so it streams
// from memory, and the best and median repetitions over `seconds` are kept. Threads persist
// and start each repetition from a spin barrier, as the kernels' pool does.
void stream_read(size_t chunk, double seconds, double* best_gbps, double* median_gbps) {
  const size_t n = size_t{128} << 20;  // floats: 512 MiB
  const size_t per = chunk / sizeof(float);
  float* buf = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<int64_t> go{0}, done{0};
  std::vector<float> part(threads);
  auto slice = [&](unsigned t, int64_t rep) {
    const size_t base = static_cast<size_t>(rep) % (n / per) * per;
    const size_t b = base + per / threads / 32 * 32 * t;
    const size_t len = t + 1 == threads ? base + per - b : per / threads / 32 * 32;
    part[t] += sum_range(buf + b, len);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {  // first touch in parallel
    pool.emplace_back(
        [&, t] { std::fill(buf + n / threads * t, buf + n / threads * (t + 1), 1.0f); });
  }
  for (auto& th : pool) th.join();
  pool.clear();
  for (unsigned t = 1; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t rep = 1;; ++rep) {
        int64_t g;
        while ((g = go.load(std::memory_order_acquire)) >= 0 && g < rep) {
        }
        if (g < 0) return;
        slice(t, rep);
        done.fetch_add(1, std::memory_order_acq_rel);
      }
    });
  }
  std::vector<double> times;
  const auto start = Clock::now();
  for (int64_t rep = 1;
       times.size() < 10 || std::chrono::duration<double>(Clock::now() - start).count() < seconds;
       ++rep) {
    const auto t0 = Clock::now();
    go.store(rep, std::memory_order_release);
    slice(0, rep);
    while (done.load(std::memory_order_acquire) < rep * int64_t{threads - 1}) {
    }
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  go.store(-1, std::memory_order_release);
  for (auto& th : pool) th.join();
  std::free(buf);
  std::sort(times.begin(), times.end());
  *best_gbps = chunk / times.front() / 1e9;
  *median_gbps = chunk / times[times.size() / 2] / 1e9;
}

struct Case {
  tc_dtype_t w;
  const char* name;
};

}  // namespace

bool bench_quant_cpu(int N, int K, const std::vector<int>& ms, double seconds_per_case,
                     QuantBenchReport* out) {
  // The chunk of the streaming read: the size of the Q4_0 matrix, the case that matters most.
  stream_read(tc_quant_row_bytes(TC_DTYPE_Q4_0, K) * N, std::max(0.5, seconds_per_case),
              &out->stream_gbps, &out->stream_median_gbps);
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
        if (!act8 && std::getenv("TC_BENCH_QUANT_ACT8_ONLY") != nullptr) continue;
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
        out->rows.push_back({c.name, tc_last_instance(), M, N, K, act8, t * 1e6, bytes / t / 1e9,
                             bytes / times.front() / 1e9});
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
  std::fprintf(f, "streaming read, all cores: best %.1f GB/s, median %.1f GB/s\n", r.stream_gbps,
               r.stream_median_gbps);
  std::fprintf(f, "%-6s %-28s %3s %6s %6s %-5s %9s %7s %7s %7s\n", "format", "instance", "M", "N",
               "K", "act", "med us", "med GB/s", "best", "%read");
  for (const auto& row : r.rows) {
    std::fprintf(f, "%-6s %-28s %3d %6d %6d %-5s %9.1f %8.1f %7.1f %6.0f%%\n", row.format.c_str(),
                 row.instance.c_str(), row.M, row.N, row.K, row.act8 ? "8bit" : "f32", row.us,
                 row.gbps, row.best_gbps, 100 * row.best_gbps / r.stream_gbps);
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
