// `tc bench gemm --device cuda`: each case of gemm_cases.h timed three ways in one run, all with
// CUDA events after warm-up, medians, and inputs rotated over enough copies to exceed twice
// the L2 (so no timing reads warm operands):
//  - tc: tc_gemm_async / tc_gemm_batched_async through the dispatch (autotuned; the first call
//    tunes, untimed, its wall time reported);
//  - own: tc's own kernels (the static ladder, TC_AUTOTUNE=0) when the tuned choice was not one;
//  - cuBLASLt called directly (cublaslt_peer.h), when --vs-peer / --vs-cublas asks for it, in
//    batches that alternate with tc's (so a drift of the GPU's clocks weighs on both alike).
// Peak device memory held by tc's allocator is
// recorded per cell (trimmed before each): during the tuning call, and in the steady state
// (trimmed again after it: buffers + the chosen kernel's workspace); per table, the largest.
#pragma once

#include <tc/tc.h>

#include <nlohmann/json.hpp>
#include <string>

#include "gemm_cases.h"

namespace tc::bench {

struct CudaBenchOptions {
  CaseOptions cases;
  bool vs_peer = false;
  double seconds = 0.05;  // minimum GPU time measured per timing
  std::string filter;     // run only cases whose label contains this
};

struct CellResult {
  GemmCase c;
  std::string error;
  double tc_ms = -1, own_ms = -1, peer_ms = -1;
  // Host time to queue one call (wall clock over a burst queued behind the GPU): where it
  // exceeds the GPU time of a call, the call rate, not the kernel, is what the cell measures.
  double tc_host_us = -1, peer_host_us = -1;
  std::string backend, instance, own_instance, peer_error;
  std::string peer_algo;      // the peer's algorithm (cublaslt_algo_tag)
  double first_call_ms = -1;  // wall time of tc's first call: tuning, module loading, planning
  // Whether tc ran cuBLASLt with the peer's algorithm (its instance name ends with the tag).
  bool same_algo_as_peer() const;
  uint64_t peak_bytes = 0, buffer_bytes = 0;  // steady state (after tuning)
  uint64_t tune_peak_bytes = 0;               // during the first (tuning) call
  int sets = 1;
  double value(double ms) const;  // TFLOP/s (TOP/s) or GB/s of B; -1 when ms < 0
};

// Runs the cases on a CUDA context; prints a table per suite on stdout (progress on stderr) and
// returns the JSON document (cells, per-table peaks, device, versions).
nlohmann::json run_cuda_gemm_bench(tc_context_t* ctx, const CudaBenchOptions& o);

// gemm_cuda_report.cpp
void print_table(const std::string& table, const std::vector<CellResult>& cells, bool vs_peer);
nlohmann::json cell_json(const CellResult& r);

}  // namespace tc::bench
