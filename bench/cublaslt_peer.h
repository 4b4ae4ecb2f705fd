// The benchmark's peer: cuBLASLt called directly, as an application would call it (its
// heuristic's first algorithm, a 32 MiB workspace, default reduction schemes), never through
// tc's dispatch. Row-major problems are run as C^T = B^T A^T in cuBLASLt's column-major terms.
#pragma once

#include <cublasLt.h>
#include <tc/tc.h>

#include <string>

namespace tc::bench {

struct PeerProblem {
  int M, N, K, batch;
  tc_dtype_t in, out, accum;
  bool ta, tb;  // contiguous operands; batch strides M*K, K*N, M*N
};

class CublasLtPeer {
 public:
  CublasLtPeer();
  ~CublasLtPeer();
  CublasLtPeer(const CublasLtPeer&) = delete;
  CublasLtPeer& operator=(const CublasLtPeer&) = delete;

  // Descriptors and the heuristic's algorithm for q; false with `why` when cuBLASLt has none.
  bool prepare(const PeerProblem& q, std::string* why);
  bool run(const void* a, const void* b, void* c, cudaStream_t stream);
  size_t workspace_bytes() const { return ws_bytes_; }
  // The prepared algorithm's configuration (cublaslt_algo_tag): tc's cuBLASLt instance names
  // end with the same tag when tc runs the same algorithm.
  std::string algo_tag() const;
  const cublasLtMatmulAlgo_t& algo() const { return algo_.algo; }

 private:
  void release();
  cublasLtHandle_t h_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_{};
  bool i8_ = false;
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
};

}  // namespace tc::bench
