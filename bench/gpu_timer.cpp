#include "gpu_timer.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace tc::bench {

double median_ms(cudaStream_t stream, const std::function<bool(int)>& launch, double min_seconds) {
  cudaEvent_t e0, e1;
  if (cudaEventCreate(&e0) != cudaSuccess) return -1;
  if (cudaEventCreate(&e1) != cudaSuccess) {
    cudaEventDestroy(e0);
    return -1;
  }
  int calls = 0;
  auto batch = [&](int n) -> double {
    cudaEventRecord(e0, stream);
    for (int i = 0; i < n; ++i)
      if (!launch(calls++)) return -1;
    cudaEventRecord(e1, stream);
    float ms = 0;
    if (cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
      return -1;
    return double(ms);
  };
  double result = -1;
  if (batch(1) >= 0) {  // warm-up
    const double one = batch(1);
    if (one >= 0) {
      const int per = std::clamp(int(2.0 / std::max(one, 1e-4)), 1, 500);
      std::vector<double> t;
      double total_ms = 0;
      while (t.size() < 5 || (total_ms < min_seconds * 1e3 && t.size() < 200)) {
        const double ms = batch(per);
        if (ms < 0) break;
        t.push_back(ms / per);
        total_ms += ms;
      }
      if (t.size() >= 5) {
        std::sort(t.begin(), t.end());
        result = t[t.size() / 2];
      }
    }
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return result;
}

double host_us_per_call(cudaStream_t stream, const std::function<bool(int)>& launch) {
  constexpr int kCalls = 200;  // well inside the launch queue's depth
  if (cudaStreamSynchronize(stream) != cudaSuccess) return -1;
  const auto t0 = std::chrono::steady_clock::now();
  bool ok = true;
  for (int i = 0; i < kCalls && ok; ++i) ok = launch(i);
  const auto t1 = std::chrono::steady_clock::now();
  if (cudaStreamSynchronize(stream) != cudaSuccess || !ok) return -1;
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls;
}

}  // namespace tc::bench
