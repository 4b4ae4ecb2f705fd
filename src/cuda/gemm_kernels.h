// Launchers of tc's own CUDA GEMM kernels (gemm_*.cu). Host-side C++, free of CUDA types:
// streams travel as void* (cudaStream_t), device pointers as void*. The dispatch rows in
// src/cuda call plan_* to learn whether an instance serves a problem and how much workspace
// it needs, allocate that workspace, then call launch_*. Instance names follow STYLE.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/dispatch.h"

namespace tc::cuda {

// Device facts a plan depends on (filled by the backend from cudaGetDeviceProperties).
struct GemmDevice {
  int sm_count = 132;
  int cc_major = 9, cc_minor = 0;
  size_t smem_optin = 232448;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
};

// A chosen instance and its run-time parameters. workspace_bytes must be available (device
// memory, 256-byte aligned) at launch; it holds padded operand copies when a leading
// dimension, batch stride or pointer is not TMA-legal (16-byte multiples), and split-K
// partial sums (reduced in a fixed order: results are deterministic).
struct GemmPlan {
  std::string name;  // e.g. gemm_wgmma_bf16_f32_nt_bm128_bn256_bk64_s4_aligned
  int bn = 256, stages = 4, splits = 1;
  int bm = 128;     // wgmma tile rows: 128, or 64 for small M / few tiles (16-bit inputs)
  int cluster = 1;  // wgmma: 2 = CTA pairs sharing B through TMA multicast (128 x 256 tile)
  int grid = 0;     // CTAs (persistent kernels: min(work units, SMs))
  bool pack_a = false, pack_b = false;
  bool prefetch = false;  // skinny: B prefetched into L2 before grid_dep_wait (and ahead)
  bool swap_ab = false;   // wgmma: runs C^T = B^T A^T (fewer waves), C written transposed
  size_t workspace_bytes = 0;
};

// --- sm_90a: TMA + wgmma, warp-specialized, persistent (gemm_wgmma*.cu) -------------------
// Serves f16/bf16 -> f16/bf16/f32 (accum f32) in all four transposes and int8 -> int32 (any
// transposes: non-K-major int8 operands are transposed into the workspace first), any M, N,
// K, ld. Returns false with `why` when it cannot (not sm_90, dtype combination).
// Knob: TC_USE_128_TILE=1 forces the 128x256 tile.
// p.variant 0 = the built-in heuristic; 1..gemm_wgmma_variant_count() = fixed (BM, BN, split-K)
// for the autotuner to time: 1..7 = BM 128 with (BN, split-K) {256,1} {128,1} {128,2} {128,4}
// {128,8} {256,2} {256,4}; 8..10 = BM 64 with {128,1} {64,1} {64,2} (int8: BM 128 instead);
// 11 = 128 x 256 in 2-CTA clusters with B multicast.
// Knob TC_WGMMA_EPILOGUE=direct (read per launch) disables the TMA-store epilogue.
bool plan_gemm_wgmma(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan, std::string& why);
int gemm_wgmma_variant_count();
tc_status_t launch_gemm_wgmma(const GemmProblem& p, const GemmPlan& plan, void* workspace);

// --- any sm_80+: mma.sync m16n8k16, predicated loads, any ld / alignment (gemm_mma.cu) -----
// f16/bf16 -> f16/bf16/f32, all transposes; no workspace.
bool plan_gemm_mma(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan, std::string& why);
tc_status_t launch_gemm_mma(const GemmProblem& p, const GemmPlan& plan);

// --- M <= 32 decode: streams B (N x K, transpose_b) at memory bandwidth ---
// gemm_skinny.cu (registers) and gemm_skinny_bulk.cu (bulk-copy ring, TC_SKINNY_BULK=1).
// f16/bf16 -> f16/bf16/f32, A K-contiguous; any alignment (vector loads when 16-B aligned).
bool plan_gemm_skinny(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan,
                      std::string& why);
tc_status_t launch_gemm_skinny(const GemmProblem& p, const GemmPlan& plan);

// --- f32 exact (SIMT FFMA), and TF32 on request (gemm_f32.cu) ---------------------------
bool plan_gemm_f32(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan, std::string& why);
tc_status_t launch_gemm_f32(const GemmProblem& p, const GemmPlan& plan);

// --- f32 at f32 accuracy on the tensor cores, sm_90a: 3xTF32 (gemm_tf32x3.cu) --------------
// f32 -> f32 with accum_dtype F32, batch 1, any transposes / ld / alignment. A pre-pass splits
// A and B into tf32 hi + lo parts, K-major, in the workspace: (M + N) x 2 round_up(K, 32) x 4
// bytes (268 MB at 4096^3). p.variant 1..3 = tensor-core chunks of 32, 64, 128 k (0 = 32):
// longer chunks are faster and less accurate (H200: 128 k gave 9e-7 rms against float64).
bool plan_gemm_tf32x3(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan,
                      std::string& why);
tc_status_t launch_gemm_tf32x3(const GemmProblem& p, const GemmPlan& plan, void* workspace);

}  // namespace tc::cuda
