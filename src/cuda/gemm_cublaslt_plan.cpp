// Builds cuBLASLt descriptors and heuristic results for a tc problem (mapping in gemm_cublaslt.h).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "cuda/cuda_types.h"
#include "cuda/gemm_cublaslt.h"
#include "cuda/gemm_cublaslt_algo.h"

namespace tc::cuda {
namespace {

size_t round256(size_t x) {
  return (x + 255) / 256 * 256;
}

// The alignment cuBLASLt may assume for a matrix whose batch entries start `stride_bytes` apart
// (cuBLASLt assumes 256 unless told; a smaller true value must be declared or kernels fault).
uint32_t alignment(const void* p, int64_t stride_bytes) {
  uint64_t v = reinterpret_cast<uintptr_t>(p) | uint64_t(stride_bytes) | 256;
  return uint32_t(v & (~v + 1));
}

// cuBLASLt's column-major view of one problem.
struct LtShape {
  cublasOperation_t opa, opb;
  uint64_t a_rows, a_cols, b_rows, b_cols, c_rows, c_cols;
  int64_t lda, ldb, ldc, stride_a, stride_b, stride_c;
  uint32_t align_a, align_b, align_c;
};

cublasStatus_t make_layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, uint64_t rows,
                           uint64_t cols, int64_t ld, int32_t batch, int64_t stride) {
  cublasStatus_t s = cublasLtMatrixLayoutCreate(l, t, rows, cols, ld);
  if (s != CUBLAS_STATUS_SUCCESS || batch <= 1) return s;
  s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                       sizeof batch);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  return cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                          sizeof stride);
}

void destroy(CublasLtPlan* plan) {
  if (plan->op) cublasLtMatmulDescDestroy(plan->op);
  for (auto* l : {plan->a, plan->b, plan->c})
    if (l) cublasLtMatrixLayoutDestroy(l);
  plan->op = nullptr;
  plan->a = plan->b = plan->c = nullptr;
  plan->algos.clear();
}

// A heuristic preference: the workspace limit, the operands' true alignments (cuBLASLt assumes
// 256 bytes unless told; for cudaMalloc'd operands the values are the defaults) and, when
// `mask` is not 0, a reduction-scheme mask.
cublasStatus_t make_pref(const LtShape& s, uint32_t mask, cublasLtMatmulPreference_t* pref) {
  cublasStatus_t st = cublasLtMatmulPreferenceCreate(pref);
  const uint64_t ws = kCublasLtMaxWorkspace;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulPreferenceSetAttribute(*pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                              sizeof ws);
  if (st == CUBLAS_STATUS_SUCCESS && mask != 0)
    st = cublasLtMatmulPreferenceSetAttribute(*pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                              &mask, sizeof mask);
  const uint32_t al[4] = {s.align_a, s.align_b, s.align_c, s.align_c};
  const cublasLtMatmulPreferenceAttributes_t keys[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < 4; ++i)
    st = cublasLtMatmulPreferenceSetAttribute(*pref, keys[i], &al[i], sizeof al[i]);
  return st;
}

bool same_algo(const cublasLtMatmulAlgo_t& x, const cublasLtMatmulAlgo_t& y) {
  return std::memcmp(&x, &y, sizeof x) == 0;
}

// Creates the descriptors of `s` and asks the heuristic for up to kCublasLtCandidates
// algorithms; on any failure the plan is left empty and `why` says what cuBLASLt answered.
// The first request is the one a direct caller makes (every reduction scheme allowed), so
// variant 0 is the algorithm such a caller runs, unless it rounds split-K partial sums to a
// 16-bit C (cublaslt_algo_precise); the algorithms declined for that are replaced by those of a
// second request limited to the schemes that reduce in the compute type.
void try_shape(cublasLtHandle_t h, const GemmProblem& p, const LtShape& s, CublasLtPlan* plan,
               std::string& why) {
  const tc_gemm_desc& d = p.d;
  const bool i8 = d.a_dtype == TC_DTYPE_I8;
  const cublasComputeType_t compute = i8 ? CUBLAS_COMPUTE_32I
                                      : d.accum_dtype == TC_DTYPE_TF32
                                          ? CUBLAS_COMPUTE_32F_FAST_TF32
                                          : CUBLAS_COMPUTE_32F;
  const cudaDataType_t scale = i8 ? CUDA_R_32I : CUDA_R_32F;
  const cudaDataType_t in = cuda_data_type(d.a_dtype), out = cuda_data_type(d.c_dtype);
  auto check = [&](cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS && why.empty())
      why = fmt::format("{} returned {}", what, cublasLtGetStatusString(st));
    return st == CUBLAS_STATUS_SUCCESS;
  };
  bool ok = check(cublasLtMatmulDescCreate(&plan->op, compute, scale), "cublasLtMatmulDescCreate");
  ok = ok && check(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &s.opa,
                                                  sizeof s.opa),
                   "setting TRANSA");
  ok = ok && check(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &s.opb,
                                                  sizeof s.opb),
                   "setting TRANSB");
  ok = ok && check(make_layout(&plan->a, in, s.a_rows, s.a_cols, s.lda, p.batch, s.stride_a),
                   "the layout of A");
  ok = ok && check(make_layout(&plan->b, in, s.b_rows, s.b_cols, s.ldb, p.batch, s.stride_b),
                   "the layout of B");
  ok = ok && check(make_layout(&plan->c, out, s.c_rows, s.c_cols, s.ldc, p.batch, s.stride_c),
                   "the layout of C");
  // Appends the heuristic's answers under `mask` (0: no mask) that are precise enough and not
  // already in the plan; returns how many it declined for precision. `first_declined`: its
  // first answer was one of them.
  bool first_declined = false;
  auto ask = [&](uint32_t mask) {
    int declined = 0;
    cublasLtMatmulPreference_t pref = nullptr;
    ok = ok && check(make_pref(s, mask, &pref), "setting the heuristic's preferences");
    cublasLtMatmulHeuristicResult_t r[kCublasLtCandidates] = {};
    int n = 0;
    ok = ok && check(cublasLtMatmulAlgoGetHeuristic(h, plan->op, plan->a, plan->b, plan->c, plan->c,
                                                    pref, kCublasLtCandidates, r, &n),
                     "cublasLtMatmulAlgoGetHeuristic");
    for (int i = 0; ok && i < n && plan->algos.size() < size_t(kCublasLtCandidates); ++i) {
      if (r[i].state != CUBLAS_STATUS_SUCCESS) continue;
      if (!cublaslt_algo_precise(r[i].algo, d.c_dtype)) {
        first_declined = first_declined || i == 0;
        ++declined;
        continue;
      }
      bool seen = false;
      for (const auto& a : plan->algos) seen = seen || same_algo(a.algo, r[i].algo);
      if (!seen) plan->algos.push_back(r[i]);
    }
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    return declined;
  };
  if (ask(0) > 0) ask(CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
  plan->direct_first = !first_declined;
  if (ok && plan->algos.empty()) {
    why = "cuBLASLt's heuristic returned no algorithm";
    ok = false;
  }
  if (!ok) destroy(plan);
}

// Reads tc's operands where they are (any transposes, any ld).
LtShape direct_shape(const GemmProblem& p) {
  const tc_gemm_desc& d = p.d;
  const bool batched = p.batch > 1;
  const int64_t ea = int64_t(tc_dtype_size(d.a_dtype)), ec = int64_t(tc_dtype_size(d.c_dtype));
  LtShape s{};
  s.opa = d.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's A is tc's B
  s.a_rows = uint64_t(d.transpose_b ? d.K : d.N);
  s.a_cols = uint64_t(d.transpose_b ? d.N : d.K);
  s.lda = d.ldb;
  s.stride_a = batched ? p.stride_b : 0;
  s.opb = d.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's B is tc's A
  s.b_rows = uint64_t(d.transpose_a ? d.M : d.K);
  s.b_cols = uint64_t(d.transpose_a ? d.K : d.M);
  s.ldb = d.lda;
  s.stride_b = batched ? p.stride_a : 0;
  s.c_rows = uint64_t(d.N);
  s.c_cols = uint64_t(d.M);
  s.ldc = d.ldc;
  s.stride_c = batched ? p.stride_c : 0;
  s.align_a = alignment(p.b, s.stride_a * ea);
  s.align_b = alignment(p.a, s.stride_b * ea);
  s.align_c = alignment(p.c, s.stride_c * ec);
  return s;
}

// int8 through packed K-contiguous operands (and a padded C scratch when needed).
LtShape packed_shape(const GemmProblem& p, CublasLtPlan* plan, bool scratch_c) {
  const tc_gemm_desc& d = p.d;
  const bool batched = p.batch > 1;
  plan->pack = true;
  plan->scratch_c = scratch_c;
  plan->kp = (int64_t(d.K) + 15) / 16 * 16;
  plan->n4 = (int64_t(d.N) + 3) / 4 * 4;
  const int64_t ba = batched && p.stride_a != 0 ? p.batch : 1;
  const int64_t bb = batched && p.stride_b != 0 ? p.batch : 1;
  plan->pack_a_bytes = round256(size_t(ba * d.M * plan->kp));
  plan->pack_b_bytes = round256(size_t(bb * plan->n4 * plan->kp));
  plan->scratch_c_bytes = scratch_c ? round256(size_t(p.batch * d.M * plan->n4 * 4)) : 0;
  LtShape s{};
  s.opa = CUBLAS_OP_T;  // packed tc-B: n4 rows of kp
  s.a_rows = uint64_t(plan->kp);
  s.a_cols = uint64_t(plan->n4);
  s.lda = plan->kp;
  s.stride_a = bb > 1 ? plan->n4 * plan->kp : 0;
  s.opb = CUBLAS_OP_N;  // packed tc-A: M rows of kp
  s.b_rows = uint64_t(plan->kp);
  s.b_cols = uint64_t(d.M);
  s.ldb = plan->kp;
  s.stride_b = ba > 1 ? int64_t(d.M) * plan->kp : 0;
  s.c_rows = uint64_t(scratch_c ? plan->n4 : d.N);
  s.c_cols = uint64_t(d.M);
  s.ldc = scratch_c ? plan->n4 : d.ldc;
  s.stride_c = batched ? (scratch_c ? plan->n4 * d.M : p.stride_c) : 0;
  s.align_a = s.align_b = 256;
  s.align_c = scratch_c ? 256 : alignment(p.c, s.stride_c * 4);
  return s;
}

bool multiple_of_4(std::initializer_list<int64_t> xs) {
  return std::all_of(xs.begin(), xs.end(), [](int64_t x) { return x % 4 == 0; });
}

}  // namespace

CublasLtPlan::~CublasLtPlan() {
  destroy(this);
}

size_t CublasLtPlan::workspace_bytes(int variant) const {
  return round256(algos[size_t(variant)].workspaceSize) + pack_a_bytes + pack_b_bytes +
         scratch_c_bytes;
}

tc_status_t build_cublaslt_plan(cublasLtHandle_t h, const GemmProblem& p, CublasLtPlan* plan,
                                std::string& why) {
  const tc_gemm_desc& d = p.d;
  plan->i8 = d.a_dtype == TC_DTYPE_I8;
  if (!plan->i8) {
    try_shape(h, p, direct_shape(p), plan, why);
    return plan->algos.empty() ? TC_ERROR_NOT_SUPPORTED : TC_SUCCESS;
  }
  // The integer kernels' own form first: tc's A row-major, B stored N x K (cuBLASLt "TN").
  const bool b1 = p.batch > 1;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p.a), b = reinterpret_cast<uintptr_t>(p.b);
  const bool c_ok = multiple_of_4({d.N, d.ldc, b1 ? p.stride_c : 0});
  if (!d.transpose_a && d.transpose_b && c_ok &&
      multiple_of_4({d.K, d.lda, d.ldb, b1 ? p.stride_a : 0, b1 ? p.stride_b : 0, int64_t(a % 4),
                     int64_t(b % 4)})) {
    try_shape(h, p, direct_shape(p), plan, why);
    if (!plan->algos.empty()) return TC_SUCCESS;
  }
  if (c_ok) {
    why.clear();
    try_shape(h, p, packed_shape(p, plan, false), plan, why);
    if (!plan->algos.empty()) return TC_SUCCESS;
  }
  why.clear();
  try_shape(h, p, packed_shape(p, plan, true), plan, why);
  return plan->algos.empty() ? TC_ERROR_NOT_SUPPORTED : TC_SUCCESS;
}

}  // namespace tc::cuda
