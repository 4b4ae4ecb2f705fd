// The autotuner's view of the CUDA device (core/autotune.h): cache keys, candidate variants and
// timing. Candidates run on the context's own stream into a scratch copy of C (same offset
// modulo 256 bytes, so the plans' alignment decisions match the real call) and are timed with
// CUDA events: one warm-up run (module loading, first-touch costs), then the median of three
// batches of runs, each batch about a millisecond long.
#include <fmt/format.h>

#include <algorithm>

#include "cuda/device.h"
#include "cuda/gemm_cublaslt.h"
#include "cuda/gemm_rows.h"

namespace tc::cuda {

std::string CudaDevice::device_key() const {
  return fmt::format("{} sm_{}{} {} SMs cublasLt {}", props_.name, props_.major, props_.minor,
                     props_.multiProcessorCount, lt_->version());
}

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
  void* scratch = nullptr;
  if (alloc(bytes, &scratch) != TC_SUCCESS) return -1;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  double result = -1;
  if (cudaMemsetAsync(scratch, 0, bytes, stream_) == cudaSuccess &&
      cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess) {
    GemmProblem q = p;
    q.c = static_cast<char*>(scratch) + offset;
    q.stream = stream_;
    q.variant = variant;
    // Milliseconds per run over a batch of n runs, or -1.
    auto batch = [&](int n) -> double {
      if (cudaEventRecord(e0, stream_) != cudaSuccess) return -1;
      for (int i = 0; i < n; ++i)
        if (row.run(q) != TC_SUCCESS) return -1;
      float ms = 0;
      if (cudaEventRecord(e1, stream_) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
          cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
        return -1;
      return double(ms) / n;
    };
    double one = batch(1) >= 0 ? batch(1) : -1;  // the first batch is the warm-up
    if (one >= 0) {
      const int reps = std::clamp(int(1.0 / std::max(one, 1e-3)), 1, 50);
      double t[3];
      bool ok = true;
      for (double& x : t) ok = ok && (x = batch(reps)) >= 0;
      if (ok) {
        std::sort(t, t + 3);
        result = t[1];
      }
    }
  }
  cudaStreamSynchronize(stream_);
  (void)cudaGetLastError();
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  release(scratch);
  return result;
}

}  // namespace tc::cuda
