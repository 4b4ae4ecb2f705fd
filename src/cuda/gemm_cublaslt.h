// cuBLASLt as dispatch rows: every dtype combination the API accepts (f32 exact with
// CUBLAS_COMPUTE_32F, TF32 only when accum_dtype asks for it, f16/bf16 -> f16/bf16/f32 with f32
// accumulation, i8 -> i32), all transposes, any leading dimension, batched as strided batch.
//
// tc is row-major and cuBLASLt column-major: C = op(A) op(B) is run as C^T = op(B)^T op(A)^T,
// so cuBLASLt's "A" is tc's B and its "B" is tc's A, each read in place with its own ld.
// cuBLASLt's integer kernels take only the "TN" form with dimensions and pitches in multiples
// of 4; other i8 problems are first copied into K-contiguous, zero-padded operands (and C into
// a padded scratch when N or ldc is not a multiple of 4), all inside the stream's workspace.
//
// The algorithms are those of cuBLASLt's heuristic for the request a direct caller makes (a
// 32 MiB workspace limit, NVIDIA's recommendation for Hopper; every reduction scheme), in its
// order: variant 0 is what an application calling cublasLtMatmul itself runs, so a tuned choice
// of variant 0 performs as that application does. Every split-K reduction scheme is
// deterministic; those that round partial sums to a 16-bit C are replaced by the heuristic's
// compute-type alternatives (gemm_cublaslt_algo.h). The plan records what the chosen algorithm
// really needs of the workspace.
#pragma once

#include <cublasLt.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/dispatch.h"

namespace tc::cuda {

class CudaDevice;

constexpr size_t kCublasLtMaxWorkspace = size_t(32) << 20;
// Heuristic results the autotuner times. Eight, not four: for f32 512^3 the heuristic's 7th
// algorithm (id 20, split-K 4) ran 14.95 us on the GPU and 12.5 us of host time per call against
// 15.4 / 15.2 us for its 1st, the one an application calling cuBLASLt directly gets (H200,
// 2026-11-29 17:56 UTC); each extra candidate costs a few milliseconds of tuning per class.
constexpr int kCublasLtCandidates = 8;

// One problem signature's descriptors and heuristic results.
struct CublasLtPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A, B, C (= D)
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  // Per algorithm: gemm_cublaslt_bf16_h2_a66_t20_s8_k1_r0_w0_o0_c0 (interned; the suffix is
  // cublaslt_algo_tag, so a benchmark can tell whether tc ran a direct caller's algorithm).
  std::vector<const char*> names;
  // algos[0] is the heuristic's first answer to a direct caller's request (false when that
  // answer rounded split-K partial sums to a 16-bit C and was replaced).
  bool direct_first = true;
  bool i8 = false;
  // i8 repacking (see above); dims of the packed operands.
  bool pack = false, scratch_c = false;
  int64_t kp = 0, n4 = 0;
  size_t pack_a_bytes = 0, pack_b_bytes = 0, scratch_c_bytes = 0;  // tc's A, tc's B, C scratch

  CublasLtPlan() = default;
  CublasLtPlan(const CublasLtPlan&) = delete;
  CublasLtPlan& operator=(const CublasLtPlan&) = delete;
  ~CublasLtPlan();
  size_t workspace_bytes(int variant) const;
};

// Everything that shapes a plan's descriptors and the heuristic's answer, pointer alignments
// included (capped at 256 bytes, as cuBLASLt assumes). A plain struct: hashing and comparing it
// costs far less than the launch it serves.
struct CublasLtKey {
  int32_t a, b, c, acc, ta, tb, M, N, K, lda, ldb, ldc, batch, beta_nonzero;
  int64_t stride_a, stride_b, stride_c;
  uint32_t align_a, align_b, align_c;
  static CublasLtKey of(const GemmProblem& p);
  bool operator==(const CublasLtKey&) const = default;
};
struct CublasLtKeyHash {
  size_t operator()(const CublasLtKey& k) const;
};

class CublasLt {
 public:
  static tc_status_t create(std::unique_ptr<CublasLt>* out);
  ~CublasLt();
  size_t version() const { return version_; }
  // The cached plan for p; nullptr with `why` when cuBLASLt offers no algorithm for it.
  std::shared_ptr<const CublasLtPlan> plan(const GemmProblem& p, std::string& why);
  tc_status_t run(const GemmProblem& p, CudaDevice& dev);

 private:
  std::shared_ptr<const CublasLtPlan> plan(const CublasLtKey& key, const GemmProblem& p,
                                           std::string& why);
  cublasLtHandle_t h_ = nullptr;
  size_t version_ = 0;
  uint64_t serial_ = 0;  // unique per instance (the per-thread last-plan cache's owner)
  std::mutex mu_;
  std::unordered_map<CublasLtKey, std::shared_ptr<const CublasLtPlan>, CublasLtKeyHash> plans_;
};

// gemm_cublaslt_plan.cpp: builds the plan (descriptors + heuristics) for p.
tc_status_t build_cublaslt_plan(cublasLtHandle_t h, const GemmProblem& p, CublasLtPlan* plan,
                                std::string& why);

}  // namespace tc::cuda
