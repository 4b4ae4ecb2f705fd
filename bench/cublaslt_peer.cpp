#include "cublaslt_peer.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cuda/cuda_types.h"
#include "cuda/gemm_cublaslt_algo.h"

namespace tc::bench {
namespace {

constexpr size_t kWorkspace = size_t(32) << 20;

cublasStatus_t layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, uint64_t rows, uint64_t cols,
                      int64_t ld, int32_t batch, int64_t stride) {
  cublasStatus_t s = cublasLtMatrixLayoutCreate(l, t, rows, cols, ld);
  if (s == CUBLAS_STATUS_SUCCESS && batch > 1) {
    s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                         sizeof batch);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                           sizeof stride);
  }
  return s;
}

}  // namespace

CublasLtPeer::CublasLtPeer() {
  if (cublasLtCreate(&h_) != CUBLAS_STATUS_SUCCESS) h_ = nullptr;
  if (cudaMalloc(&ws_, kWorkspace) == cudaSuccess) ws_bytes_ = kWorkspace;
}

CublasLtPeer::~CublasLtPeer() {
  release();
  if (ws_) cudaFree(ws_);
  if (h_) cublasLtDestroy(h_);
}

void CublasLtPeer::release() {
  if (op_) cublasLtMatmulDescDestroy(op_);
  for (auto* l : {a_, b_, c_})
    if (l) cublasLtMatrixLayoutDestroy(l);
  op_ = nullptr;
  a_ = b_ = c_ = nullptr;
}

bool CublasLtPeer::prepare(const PeerProblem& q, std::string* why) {
  release();
  if (!h_ || !ws_) {
    *why = "cuBLASLt could not be initialized";
    return false;
  }
  i8_ = q.in == TC_DTYPE_I8;
  const cublasComputeType_t compute = i8_                        ? CUBLAS_COMPUTE_32I
                                      : q.accum == TC_DTYPE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                 : CUBLAS_COMPUTE_32F;
  const cublasOperation_t opa = q.tb ? CUBLAS_OP_T : CUBLAS_OP_N;  // cuBLASLt's A is our B
  const cublasOperation_t opb = q.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const bool batched = q.batch > 1;
  cublasStatus_t s = cublasLtMatmulDescCreate(&op_, compute, i8_ ? CUDA_R_32I : CUDA_R_32F);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb);
  if (s == CUBLAS_STATUS_SUCCESS)  // B row-major: K x N (ld N), or N x K (ld K) when tb
    s = layout(&a_, tc::cuda::cuda_data_type(q.in), q.tb ? q.K : q.N, q.tb ? q.N : q.K,
               q.tb ? q.K : q.N, q.batch, batched ? int64_t(q.K) * q.N : 0);
  if (s == CUBLAS_STATUS_SUCCESS)  // A row-major: M x K (ld K), or K x M (ld M) when ta
    s = layout(&b_, tc::cuda::cuda_data_type(q.in), q.ta ? q.M : q.K, q.ta ? q.K : q.M,
               q.ta ? q.M : q.K, q.batch, batched ? int64_t(q.M) * q.K : 0);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = layout(&c_, tc::cuda::cuda_data_type(q.out), q.N, q.M, q.N, q.batch,
               batched ? int64_t(q.M) * q.N : 0);
  cublasLtMatmulPreference_t pref = nullptr;
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceCreate(&pref);
  const uint64_t ws = ws_bytes_;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                             sizeof ws);
  int n = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(h_, op_, a_, b_, c_, c_, pref, 1, &algo_, &n);
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS || n == 0) {
    *why = s != CUBLAS_STATUS_SUCCESS ? fmt::format("cuBLASLt: {}", cublasLtGetStatusString(s))
                                      : "cuBLASLt's heuristic has no algorithm";
    release();
    return false;
  }
  return true;
}

std::string CublasLtPeer::algo_tag() const {
  return op_ ? tc::cuda::cublaslt_algo_tag(algo_.algo) : std::string();
}

bool CublasLtPeer::run(const void* a, const void* b, void* c, cudaStream_t stream) {
  const float fa = 1.0f, fb = 0.0f;
  const int32_t ia = 1, ib = 0;
  const void* alpha = i8_ ? static_cast<const void*>(&ia) : &fa;
  const void* beta = i8_ ? static_cast<const void*>(&ib) : &fb;
  return cublasLtMatmul(h_, op_, alpha, b, a_, a, b_, beta, c, c_, c, c_, &algo_.algo, ws_,
                        algo_.workspaceSize, stream) == CUBLAS_STATUS_SUCCESS;
}

}  // namespace tc::bench
