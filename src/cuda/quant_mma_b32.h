// Batched decode on sm_90a (issue 4, M 9..32, M 3..8 by shape class; any M <= 32 is served): wgmma
// with W decoded once per tile into register A fragments and X in f16 as the shared-memory B
// operand (quant_mma_b32_kernel.cuh has the design; the host side is quant_mma_b32_geometry.cu, the
// plan and the queries, and quant_mma_b32.cu, the launch). Q4_0, Q4_K and Q8_0, K % 256 == 0, X
// f32, f16 or bf16 (read as given; rounded to f16 through f32: the f16-temporaries accuracy class,
// rms_scaled ~3e-4, like the f16 MMA row it replaces at M > 8; for Q8_0 it replaces the int8 MMA,
// whose 8-bit X is the coarser class). Plain C++ (the rows and the benchmark include it).
#pragma once

#include <cstddef>
#include <string>

#include "cuda/quant_kernels.h"

namespace tc::cuda::quant {

// Workspace of a call: room for X in f16 and, where K is split, the arrival words and the
// partial tiles (with TC_QUANT_B32_XCONV=helpers no X: 0 where K is not split).
// With a.work_bytes > 0 the split is limited to what fits in a.work_bytes (supports() then
// checks against the same figure), so a caller's fixed buffer gives a smaller split, not a
// refusal.
TC_QUANT_LAUNCH size_t mma_b32_work_bytes(const Args& a);
// sm_90, Q4_0 / Q4_K / Q8_0, X f32, f16 or bf16, M 1..32, K % 256 == 0, W / X / work 16-byte
// aligned, a workspace of mma_b32_work_bytes(a), TMA encoder present, and TC_QUANT_B32 not "0" (the
// A/B knob that sends the M it would take back to the older f16 MMA kernel, quant_mma_f16.cu;
// Q8_0 to the int8 MMA, quant_mma_bulk.cu; TC_QUANT_B32_Q8=0 sends Q8_0 alone).
TC_QUANT_LAUNCH bool mma_b32_supports(const Args& a, std::string& why);
// Whether the rows should run this kernel rather than the older f16 MMA one for a.N x a.K
// (both supported): from M = 9, at M 3..8 by shape class (N x K, the format, X's type for Q4_K:
// quant_mma_b32_geometry.cu, b32_at_small_m), never at M <= 2 (the bulk GEMV's);
// TC_QUANT_B32_MIN_M=m (A/B: from m, 3..9, every shape); TC_QUANT_B32_SMALL=classes (A/B: at
// M 3..8 exactly the listed classes, w / k / m); TC_QUANT_B32_OLD_BELOW=n (A/B) sends
// M <= 16 with N * K <= n to the f16 MMA kernel (docs/quant.md has the figures).
TC_QUANT_LAUNCH bool mma_b32_preferred(const Args& a);
// Where a CTA has at most 4 stages of K, queues the kernel alone (PDL when a.pdl), whose helper
// warps convert X; elsewhere the X conversion kernel (f16 into a.work; PDL when a.pdl) and the
// kernel (always PDL: it streams W while the conversion runs). TC_QUANT_B32_XCONV=helpers /
// kernel forces one (A/B).
TC_QUANT_LAUNCH tc_status_t launch_mma_b32(const Args& a, void* stream);
// Whether launch_mma_b32(a) would run the K split inside thread-block clusters (2..8 splits,
// every cluster resident at once, TC_QUANT_B32_CLUSTER not "0"; the tests and the timing say
// which path they measured).
TC_QUANT_LAUNCH bool mma_b32_cluster_split(const Args& a);

}  // namespace tc::cuda::quant
