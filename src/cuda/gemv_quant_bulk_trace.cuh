// Diagnostic timeline of the bulk GEMV (gemv_quant_bulk.cu), for finding where a launch's time
// goes inside a chain of launches (the decode step's CUDA graph), where no profiler timeline
// is at hand. With TC_QUANT_BULK_TRACE=path every launch gets its own rows of a device buffer
// (launch i < kTraceSlots: row i, one row of kTraceWords words per CTA; later launches are not
// traced); the kernel's thread 0 and warp leaders write global-timer ns there; at process exit
// the buffer is written to `path` (little-endian u64, [slot][cta][word]) and the traced
// launches' "N K grid format" lines to `path.txt`. A graph replays the rows its capture was
// given, so the last replay is what is read back (tc bench decode --batches 1 --formats q4_0:
// launches 0-128 are the eager first step, 129-257 the graph's). Words: 0 CTA start, 1 after the
// grid dependency wait, 2 X quantized, 3 the first stage landed (warp 0), 4 the last warp done, 5
// the last copy issued, 6 SM id | tiles << 32, 7 the last stage landed (any warp). The batched
// wgmma kernel (quant_mma_b32_kernel.cuh) writes rows of format 10 + FMT with its own words
// (b32::Params::trace: 2 the first stage, 3 the cluster partials written, 7 the MMA loop's
// end). scripts/trace_sum.py summarizes a trace per shape (the critical path of each launch, the
// wait, X's quantization, the tail; for format >= 10 rows "xq" is the wait -> first stage and
// "land_end" the MMA loop's end -> CTA end).
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "core/knobs.h"

namespace tc::cuda::quant::bulk_trace {

constexpr int kTraceWords = 8, kTraceSlots = 1024, kTraceCtas = 256;

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ uint32_t smid() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

struct State {
  std::mutex mu;
  unsigned long long* buf = nullptr;
  std::vector<std::array<int, 4>> launches;
  std::string path;
};

inline State& state() {
  static State s;
  return s;
}

inline void dump() {
  State& t = state();
  if (!t.buf) return;
  cudaDeviceSynchronize();
  std::vector<unsigned long long> h(size_t(kTraceSlots) * kTraceCtas * kTraceWords);
  if (cudaMemcpy(h.data(), t.buf, h.size() * 8, cudaMemcpyDeviceToHost) != cudaSuccess) return;
  if (FILE* f = std::fopen(t.path.c_str(), "wb")) {
    std::fwrite(h.data(), 8, h.size(), f);
    std::fclose(f);
  }
  if (FILE* f = std::fopen((t.path + ".txt").c_str(), "w")) {
    for (const auto& l : t.launches) std::fprintf(f, "%d %d %d %d\n", l[0], l[1], l[2], l[3]);
    std::fclose(f);
  }
}

// The rows of this launch, or nullptr when tracing is off (or the grid is wider than a row).
// The buffer is allocated by the first traced launch, which must not be inside a stream
// capture (the decode benchmark queues each step once before capturing it).
inline unsigned long long* slot(int N, int K, int grid, int format) {
  const char* p = knobs::get(knobs::kQuantBulkTrace);
  if (!p || !p[0] || grid > kTraceCtas) return nullptr;
  State& t = state();
  std::lock_guard lock(t.mu);
  if (!t.buf) {
    const size_t bytes = size_t(kTraceSlots) * kTraceCtas * kTraceWords * 8;
    if (cudaMalloc(&t.buf, bytes) != cudaSuccess) {
      cudaGetLastError();
      t.buf = nullptr;
      return nullptr;
    }
    cudaMemset(t.buf, 0, bytes);
    cudaDeviceSynchronize();
    t.path = p;
    std::atexit(dump);
  }
  // No wrap-around: later launches (tc bench decode's public-API rows) would overwrite the rows
  // of the first ones, among them the rows the graph of the first step was captured with.
  const size_t i = t.launches.size();
  if (i >= size_t(kTraceSlots)) return nullptr;
  t.launches.push_back({N, K, grid, format});
  return t.buf + i * kTraceCtas * kTraceWords;
}

}  // namespace tc::cuda::quant::bulk_trace
