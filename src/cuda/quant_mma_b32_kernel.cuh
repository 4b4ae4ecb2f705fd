// Batched decode on sm_90a, M <= 32 (issue 4: M 9..32): Y[M,N] = X[M,K] dequant(W[N,K])^T as
// Y^T = W X^T, with each W tile decoded ONCE from its packed blocks straight into wgmma's
// register A operand (m64) and X (f32, f16 or bf16: Params::xk) in f16: f16 X as it is, f32 /
// bf16 X converted by a small kernel before (or, where a CTA has few stages, X of any kind by the
// kernel's helper warps: Params::xin; half X is widened to f32 first, so it gives the bits of X
// widened to f32), as the B operand (NX = 16 or 32 columns: n16 / n32, rows >= M zero) read by
// the tensor cores from shared memory. The fused prefill GEMM (quant_prefill_kernel.cuh) with a
// narrow X tile, more W rows per CTA and a K split:
//  - The mma.sync kernels (quant_mma_f16.cu, quant_mma_xreg.cu) at M = 32 run four column
//    tiles of m16n8k16 per weight fragment and load X's B fragments from shared memory with
//    the lanes' own instructions (~2x the weight bytes' shared-memory traffic at M = 32). Here
//    a warp's work per 16 x 64 weights is the decode alone plus 4 wgmma issues; X never passes
//    through registers. Accumulators are NX / 2 f32 registers per thread.
//  - CTA: warpgroup 0 produces (thread 0 issues the TMA copies; warps 1..3, Q4_K, turn the
//    block headers into f16 scales and, with P.xin, convert X into the stage:
//    quant_mma_b32_helpers.cuh), NW consumer warpgroups
//    each own 64 W rows (64 NW rows a CTA: X is reread from L2 once per CTA, so wider CTAs
//    read less of it: at NW = 4, NX = 32, 0.44 bytes of X per byte of Q4_0).
//  - Stage: 128 k (two 64-k X boxes, 128B-swizzled, and one W box per row: 80 bytes for Q4_0 /
//    Q4_K as in the prefill kernel, 144 for Q8_0, quant_mma_b32_q8.cuh), up to 8 stages.
//    Cfg::PAIR (Q4_0's default since 2026-11-30, Q4_K's at M <= 8; TC_QUANT_B32_WBOX=pair for all,
//    =stage for none): one W box per row for two stages (256 k: 144 bytes Q4_0 /
//    Q4_K, 272 Q8_0, 16-byte aligned at even stages, so the splits are even): half the TMA
//    rows. H200 00:45 UTC, Q4_0 131072x4096 M = 32: the stream alone (consumers computing
//    nothing) 115.6 us of the kernel's 123.2 with one-stage boxes, 96.6 with pairs (W alone
//    106.6 -> 87.7 us, 2.83 -> 3.44 TB/s): short rows per TMA request do cap the stream; but
//    the kernel with pairs took 118.0 us (the consumers limit next), the 7B step at batch 32
//    Q4_0 -0.05 ms, Q4_K +0.05, Q8_0 (4 stages) +0.83; with the K split capped, Q4_0 -0.09 ms
//    (docs/quant.md).
//  - K split where the W tiles alone leave SMs idle (N = 4096: 16 tiles of 256 rows): where
//    every cluster fits at once, the splits of a tile are one thread-block cluster and add
//    their partials over DSMEM (quant_mma_b32_cluster.cuh; grid splits x tiles); elsewhere
//    (grid tiles x splits) each CTA writes its partial tile to the workspace, the last CTA of a
//    tile to arrive (one atomic ticket per CTA on a word tagged with the launch's token, so
//    that nothing has to zero it before) adds them in split order and writes Y
//    (quant_mma_b32_fixup.cuh). Either way deterministic, no float atomics, the same bits.
//  - PDL: the producer copies the first ring's W before griddepcontrol.wait (W is not written
//    by the kernels before: the caller's promise with Args::pdl, or the convert kernel launched
//    without PDL orders it), X after it.
// PTX ISA: wgmma.mma_async (register A), cp.async.bulk.tensor, mbarrier, griddepcontrol.
// Consumers and epilogue: quant_mma_b32_consumer.cuh. Host side: quant_mma_b32_geometry.cu (the
// K split, the workspace, who converts X) and quant_mma_b32.cu (the launch).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/gemv_quant_bulk_trace.cuh"
#include "cuda/quant_mma_b32_cluster.cuh"
#include "cuda/quant_mma_b32_consumer.cuh"
#include "cuda/quant_mma_b32_helpers.cuh"
#include "cuda/quant_prefill_wgmma.cuh"
#include "cuda/tile/grid_dep.cuh"
#include "cuda/tile/tma.cuh"

namespace tc::cuda::quant::b32 {

using namespace tc::tile;

template <int FMT_, int NW_, int NX_, bool PAIR_ = false>
struct Cfg {
  static constexpr int FMT = FMT_, NW = NW_, NX = NX_;
  static constexpr int kRows = 64 * NW, kThreads = 128 * (NW + 1);
  static constexpr int kXHalf = NX * 128, kXStage = 2 * kXHalf;  // two {64 k, NX rows} boxes
  // W box: one stage (128 k) of a row, or with PAIR two (256 k: the header comment has why).
  // Bytes of a box row, which is the row pitch in shared memory: one stage, Q4_0 / Q4_K the
  // prefill kernel's 80-byte box, Q8_0 144 (quant_mma_b32_q8.cuh); a pair 144 (Q4_0: 2 x 72
  // from 144 kg / 2, Q4_K: the whole block) or 272 (Q8_0). Pitches 80, 144 and 272 put the 8
  // rows a warp's gather reads in distinct banks (160 or 288 would not).
  static constexpr bool PAIR = PAIR_;
  static constexpr int kPer = PAIR ? 2 : 1;  // stages per W box
  static constexpr int kWBox = PAIR ? (FMT == kQ8_0 ? 272 : 144) : (FMT == kQ8_0 ? 144 : 80);
  static constexpr int kWSlot = kRows * kWBox;  // one box
  // PAIR: where the second stage of a box begins in its rows.
  static constexpr int kWHalf = FMT == kQ4_0 ? 72 : FMT == kQ8_0 ? 136 : 64;
  // Q4_K: per stage, row and k64 sub-step {s lo, s hi, -m lo, -m hi} (half2), by the helpers.
  static constexpr int kScaleSlot = FMT == kQ4_K ? kRows * 32 : 0;
  static constexpr int kStageBytes = kXStage + kScaleSlot + kWSlot / kPer;
  static constexpr int kUnits = (225 * 1024) / (kPer * (kXStage + kScaleSlot) + kWSlot);
  static constexpr int kFitAll = kUnits * kPer, kFit = kFitAll > 8 ? 8 : kFitAll;
  // Q4_K: an even ring. The helpers write the scales of stage kb + 1 at even stage kb
  // (quant_mma_b32_helpers.cuh); for kb >= S the wait on full[kb % S] orders that after the
  // consumers read the slot's previous scales (they release stage kb - S after loading the
  // scales of kb + 1 - S), but with an odd S the helpers reach kb = S - 1 (even) unordered and
  // could overwrite slot 0's scales before the consumers load them, and complete sfull[0]'s
  // next phase early (wrong Y or a hang). Found in review (2026-11-29): Q4_K at M <= 16 had
  // S = 7; M 17..32 (S = 6) ran and passed on the H200. An even S never reaches that case.
  static constexpr int kStages = FMT == kQ4_K ? kFit & ~1 : kFit;
  static constexpr size_t kRingBytes = size_t(kStages) * kStageBytes;
  static constexpr int kHelperFirst = 32, kHelpers = 96;  // warps 1..3 (quant_mma_b32_helpers)
  static constexpr size_t kSmem = 1024 + kRingBytes + 4 * kStages * 8 + 16;
  // Offset of stage slot `stage`'s W rows from the W area (row r at + r kWBox).
  static __host__ __device__ constexpr int w_off(int stage) {
    return stage / kPer * kWSlot + (PAIR ? stage % 2 * kWHalf : 0);
  }
  static_assert(kSmem <= 227 * 1024, "shared memory per block");
  static_assert(kStages >= 3, "ring depth");
  static_assert(kStages % kPer == 0, "whole W boxes in the ring");
  static_assert(FMT != kQ4_K || kStages % 2 == 0,
                "Q4_K: the helpers' scale pairs need an even ring");
};

constexpr int kMaxSplits = 16;

struct Params {
  int M, N, K;
  int tiles, splits, per;  // W tiles, K splits (<= kMaxSplits), stages per split (Q4_K: even)
  // How the last CTA of a tile loads the partials (quant_mma_b32_fixup.cuh; every form adds in
  // split order: the same bits).
  int fixup;
  // X converted to f16 by the helper warps (where a CTA has <= 4 stages;
  // quant_mma_b32_geometry.cu) instead of copied by TMA from the convert kernel's f16.
  bool xin;
  // The splits of a tile are one cluster (grid splits x tiles; quant_mma_b32_cluster.cuh)
  // instead of the workspace fixup (grid tiles x splits).
  bool cluster;
  const void* x;  // xin: X [M][K] of kind xk
  float* y;
  float* part;  // splits > 1: [splits][tiles][NX][kRows]
  // splits > 1: [tiles] arrival words, token << 8 | arrivals. A word whose token is not this
  // launch's counts as 0 arrivals and the last arrival writes 0, so no kernel has to zero them
  // before (garbage in the workspace would have to equal this launch's 56-bit token).
  unsigned long long* cnt;
  unsigned long long token;  // nonzero, < 2^56, new for every launch (graph replays: the same)
  // Stages whose W boxes the producer issues together (it waits until all their slots are
  // free): the DRAM sees a row's pieces of `batch` stages at once (TC_QUANT_B32_WBATCH, A/B;
  // H200 00:45 UTC: 2 or 4 moved nothing on the stream shape, so it is not the DRAM's page
  // locality in time that costs; capped at S - kPer in the kernel).
  int batch = 1;
  // Measurement only (Y is garbage): 1 (TC_QUANT_B32_ABLATE=stream) the consumers release
  // every stage as soon as it lands and compute nothing: what the W and X stream alone costs;
  // 2 (=w) the same without X's copies (where the convert kernel's X is copied by TMA).
  int stream_only = 0;
  int xk = kXF32;  // X's element kind (XKind: f32, f16, bf16; quant_dequant.cuh)
  // TC_QUANT_BULK_TRACE (diagnostics, gemv_quant_bulk_trace.cuh's rows, format 10 + FMT): per
  // CTA 0 start, 1 after the grid dependency wait, 2 the first stage seen by consumer thread
  // 128, 3 (cluster K split) every rank's partial written (after the first cluster barrier), 4
  // the last warp done (after the epilogue), 5 the last copy issued, 6 SM id | tile << 32 |
  // split << 48, 7 the last consumer warp's MMA loop done (before the epilogue).
  unsigned long long* trace = nullptr;
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    mma_b32_kernel(const __grid_constant__ TmaMap map_x, const __grid_constant__ TmaMap map_w,
                   const Params P) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int FMT = C::FMT, S = C::kStages;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  uint8_t* xs = smem;                          // S x kXStage, 1024-aligned (swizzle atoms)
  uint8_t* ws = smem + S * C::kXStage;         // S / kPer x kWSlot
  uint8_t* ss = ws + S / C::kPer * C::kWSlot;  // Q4_K: S x kScaleSlot
  auto* full = reinterpret_cast<mbarrier*>(ss + S * C::kScaleSlot);
  mbarrier* empty = full + S;
  mbarrier* sfull = empty + S;
  mbarrier* xfull = sfull + S;
  int* flag = reinterpret_cast<int*>(xfull + S);
  const int tile = P.cluster ? blockIdx.y : blockIdx.x, split = P.cluster ? blockIdx.x : blockIdx.y;
  const int n0 = tile * C::kRows, kb0 = split * P.per;
  const int nk = min(P.per, P.K / kBK - kb0);
  unsigned long long* tr =
      P.trace ? P.trace + size_t(blockIdx.y * gridDim.x + blockIdx.x) * 8 : nullptr;
  if (tr && threadIdx.x == 0) {
    tr[0] = bulk_trace::now_ns();
    tr[6] = bulk_trace::smid() | (uint64_t(tile) << 32) | (uint64_t(split) << 48);
  }
  if (threadIdx.x == 0) {
    if (!P.xin) tma_prefetch_map(&map_x);
    tma_prefetch_map(&map_w);
    for (int s = 0; s < S; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 4 * C::NW);  // lane 0 of each consumer warp
      mbar_init(&sfull[s], C::kHelpers);
      mbar_init(&xfull[s], C::kHelpers);
    }
    mbar_fence_init();
  }
  __syncthreads();
  grid_dep_launch_dependents();  // the next kernel's CTAs may queue behind this grid's

  const int tid = threadIdx.x;
  float d[C::NX / 2];
  const bool consumer = tid >= 128;
  if (consumer && P.stream_only) {
    consume_nothing<C>(full, empty, sfull, xfull, P.xin, nk, d);
  } else if (consumer) {
    consume<C>(xs, ws, ss, full, empty, sfull, xfull, P.xin, kb0, nk, d, tr);
    if (tr && threadIdx.x % 32 == 0) atomicMax(&tr[7], bulk_trace::now_ns());
  } else if (tid >= C::kHelperFirst) {
    helpers<C>(P, xs, ws, ss, full, empty, sfull, xfull, kb0, nk, tid - C::kHelperFirst);
  } else if (tid == 0) {
    constexpr int U = C::kPer;
    // W of stages kb .. kb + U - 1 (one box), completing on full[kb % S] (kb % U == 0).
    auto load_w = [&](int kb) {
      const int kg = kb0 + kb;
      uint8_t* wd = ws + C::w_off(kb % S);
      if constexpr (C::PAIR)  // blocks' bytes of k 256 (kg / 2) .. + 255; Q8_0 in 2-byte units
        tma_load_3d(wd, &map_w, &full[kb % S], (FMT == kQ8_0 ? 136 : 144) * (kg / 2), n0, 0);
      else if constexpr (FMT == kQ4_0)  // the stage's 4 blocks: 72 bytes at 72 kg
        tma_load_3d(wd, &map_w, &full[kb % S], 72 * kg / 16 * 16, n0, 0);
      else if constexpr (FMT == kQ8_0)  // 136 bytes at 136 kg
        tma_load_3d(wd, &map_w, &full[kb % S], 136 * kg / 16 * 16, n0, 0);
      else  // block kg / 2: from its start (header, qs 0..63) or its byte 64 (qs 64..127)
        tma_load_3d(wd, &map_w, &full[kb % S], 144 * (kg / 2) + 64 * (kg & 1), n0, 0);
    };
    auto load_x = [&](int kb) {
      uint8_t* xd = xs + (kb % S) * C::kXStage;
      tma_load_3d(xd, &map_x, &full[kb % S], (kb0 + kb) * kBK, 0, 0);
      tma_load_3d(xd + C::kXHalf, &map_x, &full[kb % S], (kb0 + kb) * kBK + 64, 0, 0);
    };
    // The bytes that complete full[] of stage kb: the box on its first stage, X on each.
    const bool copy_x = !P.xin && P.stream_only != 2;
    const uint32_t xtx = copy_x ? uint32_t(C::kXStage) : 0u;
    auto expect = [&](int kb) {
      mbar_arrive_expect_tx(&full[kb % S], kb % U == 0 ? C::kWSlot + xtx : xtx);
    };
    const int pre = min(S, nk);  // nk % U == 0: PAIR splits are even (quant_mma_b32_geometry.cu)
    for (int kb = 0; kb < pre; ++kb) {  // W does not depend on the grids before
      expect(kb);
      if (kb % U == 0) load_w(kb);
    }
    grid_dep_wait();  // X (the convert kernel's without P.xin) and Y, the workspace
    if (tr) tr[1] = bulk_trace::now_ns();
    if (copy_x)
      for (int kb = 0; kb < pre; ++kb) load_x(kb);
    // At most S - U stages a batch: the consumers release stage j while they work on j + 1,
    // so the slots of a whole ring are never free at once (a batch of S stages waited for the
    // release of a stage that was never issued: Q8_0 pairs, S = 4, TC_QUANT_B32_WBATCH=4 hung
    // on the H200 at 00:46 UTC).
    const int batch = min(S - U, max(U, P.batch / U * U));
    for (int kb = pre, end; kb < nk; kb = end) {
      end = min(nk, kb + batch);
      for (int j = kb; j < end; ++j) mbar_wait(&empty[j % S], ((j / S) & 1) ^ 1);
      for (int j = kb; j < end; ++j) {
        expect(j);
        if (j % U == 0) load_w(j);
        if (copy_x) load_x(j);
      }
    }
    if (tr) tr[5] = bulk_trace::now_ns();
  }
  if (P.cluster)
    finish_cluster<C>(P, d, consumer, smem, tile);
  else
    finish<C>(P, d, consumer, flag, tile, split);
  if (tr && threadIdx.x % 32 == 0) atomicMax(&tr[4], bulk_trace::now_ns());
#endif
}

}  // namespace tc::cuda::quant::b32
