#include "gpu_timer.h"

#include <algorithm>
#include <chrono>
#include <span>
#include <vector>

namespace tc::bench {

void alternating_median_ms(cudaStream_t stream, std::span<const Launch* const> launches,
                           double min_seconds, double* ms_out) {
  const size_t n = launches.size();
  for (size_t i = 0; i < n; ++i) ms_out[i] = -1;
  cudaEvent_t e0, e1;
  if (n == 0 || cudaEventCreate(&e0) != cudaSuccess) return;
  if (cudaEventCreate(&e1) != cudaSuccess) {
    cudaEventDestroy(e0);
    return;
  }
  std::vector<int> calls(n, 0), per(n, 1);
  auto batch = [&](size_t side, int count) -> double {
    cudaEventRecord(e0, stream);
    for (int i = 0; i < count; ++i)
      if (!(*launches[side])(calls[side]++)) return -1;
    cudaEventRecord(e1, stream);
    float ms = 0;
    if (cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
      return -1;
    return double(ms);
  };
  bool ok = true;
  for (size_t side = 0; side < n && ok; ++side) {
    const double one = batch(side, 1) >= 0 ? batch(side, 1) : -1;  // warm-up, then an estimate
    ok = one >= 0;
    per[side] = std::clamp(int(2.0 / std::max(one, 1e-4)), 1, 500);
  }
  std::vector<std::vector<double>> t(n);
  std::vector<double> total(n, 0);
  const auto more = [&] {
    if (t[0].size() < 5) return true;
    if (t[0].size() >= 200) return false;
    return std::any_of(total.begin(), total.end(),
                       [&](double ms) { return ms < min_seconds * 1e3; });
  };
  for (size_t round = 0; ok && more(); ++round) {
    for (size_t k = 0; k < n && ok; ++k) {
      const size_t side = (round + k) % n;  // rotating order: none always follows another's tail
      const double ms = batch(side, per[side]);
      ok = ms >= 0;
      t[side].push_back(ms / per[side]);
      total[side] += ms;
    }
  }
  if (ok) {
    for (size_t i = 0; i < n; ++i) {
      std::sort(t[i].begin(), t[i].end());
      ms_out[i] = t[i][t[i].size() / 2];
    }
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

double median_ms(cudaStream_t stream, const Launch& launch, double min_seconds) {
  const Launch* one[] = {&launch};
  double ms = -1;
  alternating_median_ms(stream, one, min_seconds, &ms);
  return ms;
}

double graph_ms(cudaStream_t stream, const std::function<bool()>& queue, double min_seconds) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return -1;
  const bool ok = queue();
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess || !ok) {
    if (graph) cudaGraphDestroy(graph);
    return -1;
  }
  double ms = -1;
  if (cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
    ms = median_ms(
        stream, [&](int) { return cudaGraphLaunch(exec, stream) == cudaSuccess; }, min_seconds);
    cudaGraphExecDestroy(exec);
  }
  cudaGraphDestroy(graph);
  return ms;
}

double host_us_per_call(cudaStream_t stream, const std::function<bool(int)>& launch) {
  // 200 calls as before (large cells drain each burst at the GPU's pace), in bursts well inside
  // the launch queue's depth.
  constexpr int kCalls = 40, kBursts = 5;
  std::vector<double> us;
  bool ok = cudaStreamSynchronize(stream) == cudaSuccess;
  for (int b = 0, i = 0; b < kBursts && ok; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < kCalls && ok; ++k) ok = launch(i++);
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        kCalls);
    ok = cudaStreamSynchronize(stream) == cudaSuccess && ok;
  }
  if (!ok) return -1;
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace tc::bench
