// In-cache compute ceiling of the 8-bit-activation GEMV kernels (gemv_quant_q8.cpp), without
// the thread pool: the weight matrix of each thread fits in its L2 (256 KB per thread of the
// 512 KB), each of T threads is pinned to core t and computes N/T rows, and the best of many
// repetitions is kept (the machine is shared, so the minimum is the figure that does not
// depend on other people's load). Prints GB/s of weight bytes, TSC cycles per format block
// and per 32 weights on each core, and rms_scaled against float64 of the dequantized weights.
//
//   bench_q8_hot [threads=1] [M=1] [K=4096] [reps=2000] [KB per thread=256]
#include <pthread.h>
#include <sched.h>
#include <tc/tc.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "cpu/gemv_quant_q8.h"

namespace {

using Clock = std::chrono::steady_clock;

double tsc_ghz() {
  const auto t0 = Clock::now();
  const uint64_t c0 = __rdtsc();
  while (Clock::now() - t0 < std::chrono::milliseconds(100)) {
  }
  const uint64_t c1 = __rdtsc();
  return (c1 - c0) / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9;
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

struct Format {
  tc_dtype_t w;
  const char* name;
  int block_elems;
};

}  // namespace

int main(int argc, char** argv) {
  const int T = argc > 1 ? std::atoi(argv[1]) : 1;
  const int M = argc > 2 ? std::atoi(argv[2]) : 1;
  const int K = argc > 3 ? std::atoi(argv[3]) : 4096;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 2000;
  const int kb = argc > 5 ? std::atoi(argv[5]) : 256;  // weight KB per thread
  const double ghz = tsc_ghz();
  std::printf("threads %d, M %d, K %d, reps %d, TSC %.3f GHz\n", T, M, K, reps, ghz);
  std::printf("%-5s %5s %9s %8s %8s %10s %10s\n", "fmt", "N", "KB/thr", "best us", "GB/s",
              "cyc/block", "cyc/32 w");
  std::mt19937 rng(7);
  std::normal_distribution<float> nd;
  std::uniform_real_distribution<float> ud(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(M) * K);
  for (auto& v : x) v = ud(rng);
  for (const Format f : {Format{TC_DTYPE_Q4_0, "q4_0", 32}, Format{TC_DTYPE_Q8_0, "q8_0", 32},
                         Format{TC_DTYPE_Q4_K, "q4_k", 256}}) {
    const size_t rb = tc_quant_row_bytes(f.w, K);
    const int N = std::max<int>(1, static_cast<int>((size_t{1} * kb << 10) / rb)) * T;
    std::vector<float> wf(static_cast<size_t>(N) * K);
    for (auto& v : wf) v = nd(rng);
    std::vector<uint8_t> wq(rb * N);
    if (tc_quantize(f.w, wf.data(), N, K, wq.data(), wq.size()) != TC_SUCCESS) return 1;
    tc_dequantize(f.w, wq.data(), wq.size(), N, K, wf.data());
    tc::cpu::ActQ8 a;
    tc::cpu::quantize_act_q8(x.data(), M, K, tc::cpu::q8_act_layout(f.w), &a);
    std::vector<float> y(static_cast<size_t>(M) * N, std::nanf(""));

    std::atomic<int> go{0}, done{0};
    std::vector<uint64_t> best(1, ~uint64_t{0});
    auto work = [&](int t) {
      pin(t);
      for (int r = 0; r < reps; ++r) {
        while (go.load(std::memory_order_acquire) <= r) {
        }
        tc::cpu::gemv_q8_act_rows(f.w, wq.data(), K, a, M, y.data(), N, int64_t{N} * t / T,
                                  int64_t{N} * (t + 1) / T);
        done.fetch_add(1, std::memory_order_acq_rel);
      }
    };
    std::vector<std::thread> th;
    for (int t = 1; t < T; ++t) th.emplace_back(work, t);
    pin(0);
    for (int r = 0; r < reps; ++r) {
      const uint64_t c0 = __rdtsc();
      go.store(r + 1, std::memory_order_release);
      tc::cpu::gemv_q8_act_rows(f.w, wq.data(), K, a, M, y.data(), N, 0, N / T);
      done.fetch_add(1, std::memory_order_acq_rel);
      while (done.load(std::memory_order_acquire) < (r + 1) * T) {
      }
      best[0] = std::min<uint64_t>(best[0], __rdtsc() - c0);
    }
    for (auto& t : th) t.join();

    double num = 0, den = 0;
    for (int m = 0; m < M; ++m) {
      for (int n = 0; n < N; ++n) {
        double ref = 0;
        for (int k = 0; k < K; ++k) ref += double(x[size_t(m) * K + k]) * wf[size_t(n) * K + k];
        const double e = y[size_t(m) * N + n] - ref;
        num += e * e;
        den += ref * ref;
      }
    }
    const double s = best[0] / (ghz * 1e9);
    const double blocks_per_thread = double(N) / T * K / f.block_elems;
    std::printf("%-5s %5d %9.0f %8.2f %8.2f %10.2f %10.2f   rms %.2e\n", f.name, N,
                rb * N / T / 1024.0, s * 1e6, rb * N / s / 1e9, best[0] / blocks_per_thread,
                best[0] / (double(N) / T * K / 32), std::sqrt(num) / std::sqrt(den));
  }
  return 0;
}
