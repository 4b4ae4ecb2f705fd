// The autotuner's view of the CUDA device (core/autotune.h): candidate variants and timing.
//
// Candidates are timed the way tc bench gemm measures them: throughput of back-to-back runs on
// the context's stream, rotating through copies of A and B that together exceed twice the L2
// (a real model's weights are rarely in L2; up to 512 copies, as the bench, so that a 256^3
// problem is not timed on L2-resident operands the bench never sees), writing a scratch C
// (same offset modulo 256 bytes as the real C, so plans make the same alignment decisions).
// One warm-up run, then five batches of about half a millisecond; the rotation continues from
// batch to batch. Back to back, a candidate whose host cost per call exceeds its GPU time is
// timed at its host cost, as the bench (and an application) sees it. Two other methods were
// measured and dropped (H200, 2026-11-29): back-to-back runs on one warm copy chose cuBLASLt
// algorithms that lost 10-30% on cold decode weights, and single runs behind an L2 flush chose
// kernels that are fast alone but slower back to back (small shapes, 0.8x).
//
// Paired with a reference: the GPU's speed drifts by as much as the candidates differ (the same
// cuBLASLt algorithm on decode weights timed 31.0 and 33.4 us one second apart). So each
// candidate's batches alternate with batches of the reference, cuBLASLt's variant 0 (the
// algorithm a direct cuBLASLt caller runs), and the candidate's time is the median of its
// per-pair ratios to the reference times the reference's first measured time in this tuning:
// every candidate of one tuning is on one scale, with the drift between candidates divided out.
// The reference itself reports that first time. This doubles the GPU time of a tuning (each
// candidate's five batches are matched by five of the reference): in tc bench gemm (H200,
// 2026-11-29 20:10 UTC) the first call of a new class took 95 ms (median of the sweep), 105 ms
// (decode, 96 classes: 9.8 s) and at most 2.5 s (f32 8192^3). Problems cuBLASLt has no plan for
// are timed alone. Pairing removes drift, not every difference between the tuner's timings and
// long back-to-back runs (batch length is not it: TC_AUTOTUNE_BATCH_MS below): in that run three
// cuBLASLt algorithms and one own kernel that had tied or won their paired tuning ran 5-7% slower
// than the reference in the bench, which is why autotune::choose keeps the reference unless another
// is more than 5% faster.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "core/env.h"
#include "cuda/device.h"
#include "cuda/gemm_cublaslt.h"
#include "cuda/gemm_rows.h"

namespace tc::cuda {
namespace {

constexpr size_t kMaxCopies = 512;  // the bench's limit (bench/gemm_cuda_bench.cpp)
constexpr int kMaxPerBatch = 2000;
constexpr int kBatches = 5;  // median of five: one slow batch (a clock dip) cannot decide
constexpr double kDefaultBatchMs = 0.5;

// TC_AUTOTUNE_BATCH_MS (0.1..20): the length of one timed batch, for A/B runs. 2 ms (the bench's
// batch) chose the same rows as 0.5 ms from 2048^3 up and took 2.8x longer to tune (H200,
// 2026-11-29 20:41 UTC, docs/gemm.md). Read per tuning (a tuning costs far more than a getenv).
double batch_ms() {
  const auto v = env::get("TC_AUTOTUNE_BATCH_MS");
  if (!v) return kDefaultBatchMs;
  char* end = nullptr;
  const double ms = std::strtod(v->c_str(), &end);
  return end != v->c_str() && *end == '\0' ? std::clamp(ms, 0.1, 20.0) : kDefaultBatchMs;
}

size_t round256(size_t x) {
  return (x + 255) / 256 * 256;
}

double median(double* t, int n) {
  std::sort(t, t + n);
  return t[n / 2];
}

// The reference of this thread's tuning: the problem (device and cuBLASLt plan key) and the
// reference's first time for it.
struct Reference {
  const void* device = nullptr;
  CublasLtKey key{};
  double ms = -1;
};
thread_local Reference t_ref;

// The cuBLASLt row that serves p (the rows split by input dtype), or nullptr.
const GemmRow* reference_row(const GemmProblem& p) {
  for (const GemmRow& row : gemm_table()) {
    std::string why;
    if (row.backend == TC_BACKEND_CUBLASLT && row.can_run(p, why)) return &row;
  }
  return nullptr;
}

// An operand's bytes from the 256-byte boundary below its first element to its last element.
struct Span {
  size_t offset, bytes;
};
Span span(const void* p, int64_t rows, int64_t cols, int64_t ld, int32_t batch, int64_t stride,
          size_t esz) {
  const size_t offset = reinterpret_cast<uintptr_t>(p) % 256;
  const int64_t elems = int64_t(batch - 1) * stride + (rows - 1) * ld + cols;
  return {offset, offset + size_t(elems) * esz};
}

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
  const GemmRow* ref = reference_row(p);
  const bool is_ref = ref == &row && variant == 0;
  const CublasLtKey key = CublasLtKey::of(p);
  const bool known = t_ref.device == this && t_ref.key == key && t_ref.ms > 0;
  if (is_ref && known) return t_ref.ms;  // the reference's first time: this tuning's scale
  set_device(ordinal_);
  const tc_gemm_desc& d = p.d;
  const Span a = span(p.a, d.transpose_a ? d.K : d.M, d.transpose_a ? d.M : d.K, d.lda, p.batch,
                      p.stride_a, tc_dtype_size(d.a_dtype));
  const Span b = span(p.b, d.transpose_b ? d.N : d.K, d.transpose_b ? d.K : d.N, d.ldb, p.batch,
                      p.stride_b, tc_dtype_size(d.b_dtype));
  const Span c = span(p.c, d.M, d.N, d.ldc, p.batch, p.stride_c, tc_dtype_size(d.c_dtype));
  const size_t l2 = size_t(std::max(props_.l2CacheSize, 1 << 20));
  const size_t pair = round256(a.bytes) + round256(b.bytes);
  const int copies = int(std::clamp<size_t>((2 * l2 + pair - 1) / pair, 1, kMaxCopies));
  void *scratch = nullptr, *rot = nullptr;
  if (alloc(c.bytes, &scratch) != TC_SUCCESS) return -1;
  if (copies > 1 && alloc(copies * pair, &rot) != TC_SUCCESS) {
    release(scratch);
    return -1;
  }
  bool ok = cudaMemsetAsync(scratch, 0, c.bytes, stream_) == cudaSuccess;
  char* rotated = static_cast<char*>(rot);
  if (copies > 1) {
    // The first copy from the operands, then the copies made so far doubled per memcpy (nine
    // copies queue 512 pairs rather than a thousand calls).
    ok = ok &&
         cudaMemcpyAsync(rotated, static_cast<const char*>(p.a) - a.offset, a.bytes,
                         cudaMemcpyDeviceToDevice, stream_) == cudaSuccess &&
         cudaMemcpyAsync(rotated + round256(a.bytes), static_cast<const char*>(p.b) - b.offset,
                         b.bytes, cudaMemcpyDeviceToDevice, stream_) == cudaSuccess;
    for (int done = 1; ok && done < copies; done *= 2) {
      const int n = std::min(done, copies - done);
      ok = cudaMemcpyAsync(rotated + size_t(done) * pair, rotated, size_t(n) * pair,
                           cudaMemcpyDeviceToDevice, stream_) == cudaSuccess;
    }
  }
  // The candidate's runs (q[0..copies)) and the reference's (q[copies..2 copies)).
  std::vector<GemmProblem> q(size_t(2 * copies), p);
  for (int i = 0; i < 2 * copies; ++i) {
    GemmProblem& qi = q[size_t(i)];
    qi.c = static_cast<char*>(scratch) + c.offset;
    qi.stream = stream_;
    qi.variant = i < copies ? variant : 0;
    if (copies == 1) continue;
    char* base = rotated + size_t(i % copies) * pair;
    qi.a = base + a.offset;
    qi.b = base + round256(a.bytes) + b.offset;
  }
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  ok = ok && cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess;
  // Milliseconds per run over n back-to-back runs of `r` that rotate through the copies.
  int next = 0;
  auto batch = [&](const GemmRow& r, int first, int n) -> double {
    if (cudaEventRecord(e0, stream_) != cudaSuccess) return -1;
    for (int i = 0; i < n; ++i)
      if (r.run(q[size_t(first + next++ % copies)]) != TC_SUCCESS) return -1;
    float ms = 0;
    if (cudaEventRecord(e1, stream_) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
        cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
      return -1;
    return double(ms) / n;
  };
  const double want_ms = batch_ms();
  auto per_batch = [&](double one) { return std::clamp(int(want_ms / one) + 1, 1, kMaxPerBatch); };
  double result = -1;
  // The first run of each is the warm-up (module loading, plan caches).
  const bool paired = ok && !is_ref && ref != nullptr && batch(*ref, copies, 1) >= 0;
  if (ok && batch(row, 0, 1) >= 0) {
    const double one = batch(row, 0, 1);
    const double one_ref = paired ? batch(*ref, copies, 1) : -1;
    if (one > 0 && (!paired || one_ref > 0)) {
      const int per = per_batch(one), per_ref = paired ? per_batch(one_ref) : 0;
      double t[kBatches], t_ref_ms[kBatches], ratio[kBatches];
      bool good = true;
      for (int i = 0; i < kBatches && good; ++i) {
        // Alternating which goes first, so neither always follows the other's tail.
        if (paired && i % 2 == 1) good = (t_ref_ms[i] = batch(*ref, copies, per_ref)) > 0;
        good = good && (t[i] = batch(row, 0, per)) > 0;
        if (paired && i % 2 == 0) good = good && (t_ref_ms[i] = batch(*ref, copies, per_ref)) > 0;
        if (good && paired) ratio[i] = t[i] / t_ref_ms[i];
      }
      if (good && !paired) {
        result = median(t, kBatches);
        if (is_ref) t_ref = {this, key, result};
      } else if (good) {
        if (!known) t_ref = {this, key, median(t_ref_ms, kBatches)};
        result = t_ref.ms * median(ratio, kBatches);
      }
    }
  }
  cudaStreamSynchronize(stream_);
  (void)cudaGetLastError();
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  release(rot);
  release(scratch);
  return result;
}

}  // namespace tc::cuda
