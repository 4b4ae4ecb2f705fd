// The autotuner's view of the CUDA device (core/autotune.h): candidate variants and timing.
// Candidates run on the context's own stream into a scratch copy of C (same offset modulo 256
// bytes, so the plans' alignment decisions match the real call). Each is timed with CUDA events
// around single runs, every run preceded by a write of twice the L2 size so that it starts with
// cold caches: weights in a real model are rarely in L2, and timing warm operands picked
// algorithms that lost by 10-30% on cold ones (decode shapes, H200, 2026-11-29). Median of
// 5..25 runs (at least 3 ms measured), after one warm-up run.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "cuda/device.h"
#include "cuda/gemm_cublaslt.h"
#include "cuda/gemm_rows.h"

namespace tc::cuda {
namespace {
constexpr int kMinSamples = 5, kMaxSamples = 25;
constexpr double kMinMs = 3.0;
}  // namespace

int CudaDevice::gemm_variants(const GemmProblem& p, const GemmRow& row) {
  if (row.backend == TC_BACKEND_CUBLASLT) return std::max(1, cublaslt_variants(p));
#ifdef TC_CUDA_HAVE_GEMM_WGMMA
  // 0 = the planner's own choice, then its fixed (tile width, split-K) pairs.
  if (row.run == &wgmma_run) return 1 + gemm_wgmma_variant_count();
#endif
  return 1;
}

double CudaDevice::time_gemm(const GemmProblem& p, const GemmRow& row, int variant) {
  set_device(ordinal_);
  const tc_gemm_desc& d = p.d;
  const size_t esz = tc_dtype_size(d.c_dtype);
  const int64_t extent = int64_t(p.batch - 1) * p.stride_c + int64_t(d.M - 1) * d.ldc + d.N;
  const size_t offset = reinterpret_cast<uintptr_t>(p.c) % 256;
  const size_t bytes = size_t(extent) * esz + offset;
  const size_t flush_bytes = 2 * size_t(std::max(props_.l2CacheSize, 1 << 20));
  void *scratch = nullptr, *flush = nullptr;
  if (alloc(bytes, &scratch) != TC_SUCCESS) return -1;
  if (alloc(flush_bytes, &flush) != TC_SUCCESS) {
    release(scratch);
    return -1;
  }
  std::vector<cudaEvent_t> ev(2 * kMaxSamples, nullptr);
  double result = -1;
  bool ok = cudaMemsetAsync(scratch, 0, bytes, stream_) == cudaSuccess;
  for (auto& e : ev) ok = ok && cudaEventCreate(&e) == cudaSuccess;
  GemmProblem q = p;
  q.c = static_cast<char*>(scratch) + offset;
  q.stream = stream_;
  q.variant = variant;
  // Warm-up: module loading, first-touch costs, plan caches.
  ok = ok && row.run(q) == TC_SUCCESS && cudaStreamSynchronize(stream_) == cudaSuccess;
  if (ok) {
    std::vector<double> t;
    double total = 0;
    for (int i = 0; i < kMaxSamples && ok && (i < kMinSamples || total < kMinMs); ++i) {
      cudaEvent_t e0 = ev[size_t(2 * i)], e1 = ev[size_t(2 * i + 1)];
      ok = cudaMemsetAsync(flush, i & 0xff, flush_bytes, stream_) == cudaSuccess &&
           cudaEventRecord(e0, stream_) == cudaSuccess && row.run(q) == TC_SUCCESS &&
           cudaEventRecord(e1, stream_) == cudaSuccess;
      float ms = 0;
      ok = ok && cudaEventSynchronize(e1) == cudaSuccess &&
           cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
      t.push_back(ms);
      total += ms;
    }
    if (ok) {
      std::sort(t.begin(), t.end());
      result = t[t.size() / 2];
    }
  }
  cudaStreamSynchronize(stream_);
  (void)cudaGetLastError();
  for (auto& e : ev)
    if (e) cudaEventDestroy(e);
  release(flush);
  release(scratch);
  return result;
}

}  // namespace tc::cuda
