// Fused Q4 prefill GEMM (sm_90a): Y[M,N] = X[M,K] dequant(W[N,K])^T computed as
// Y^T = W X^T, with W as wgmma's A operand decoded from packed blocks straight into registers,
// so the f16 weights never exist in memory (the dequantize-then-GEMM row writes and rereads
// 117 MB for a 4096 x 14336 Q4_0 matrix).
//
// Contract:
//  - W: Q4_0 or Q4_K with K % 256 == 0 (row pitch a multiple of 16 bytes, as TMA needs), W
//    16-byte aligned; X: dense row-major [M,K] f16 (the row converts it first), 16-byte aligned;
//    Y: [M,N] f32, every element written. Any M, N: TMA zero-fills X rows >= M and W rows >= N,
//    whose products land only in masked outputs.
//  - CTA tile: 128 W rows x 128 X rows, one CTA per tile (M = 512, N = 4096: 128 CTAs, one
//    wave on 132 SMs). 384 threads: warpgroup 0 produces (one thread), warpgroups 1 and 2 each
//    own 64 W rows and compute D(64 W rows x 128 X rows) with m64n128k16 wgmmas (register A).
//  - K step per stage: 128. Stage = X box pair {64 k, 128 rows} (2 x 16 KB, 128B-swizzled) +
//    the W rows' packed bytes for those k, both by TMA: W is a 2-D byte tensor [N][row bytes]
//    read in unswizzled boxes (Q4_0: 80 bytes from 72 kb rounded down to 16, holding the
//    stage's 4 blocks; Q4_K: 80 bytes from the block's start on even stages, header and qs
//    0..63, and from its byte 64 on odd ones); a row's bytes land at the box width's stride.
//    42 KB a stage, 4 stages (Cfg). The first version copied W with plain loads from the
//    producer warps: 142.7 us at the benchmark shape against 94.2 us with those loads left
//    out (H200 18:05 UTC); by TMA in 112-byte boxes, 107.1 us (18:29); 92 us now (20:25),
//    the gain from the decode's instruction count (below), not from the box.
//  - The limit is the consumers' instruction stream (~250 SASS instructions per warp and
//    stage): folding the nibble decode's AND + OR into one LOP3 (32 of them a stage) took
//    107 -> 95 us (20:16 UTC); 80- instead of 112-byte W boxes (29% fewer W bytes) changed
//    nothing, five stages were slower (99.7 us).
//  - Consumer: per stage two k64 sub-steps; each loads its packed words from shared memory,
//    waits for the wgmma group that last read its register buffer (two buffers, wait_group 1),
//    decodes its 16 A registers (q4_0_frags / q4_k_frags), issues four wgmmas and commits.
//  - Q4_K scales: warps 2-3 of the producer warpgroup (idle otherwise) turn the block headers
//    into the half2 scale / negated-min pairs the consumers multiply by (4 KB a stage, one
//    16-byte load per row and sub-step), once per block for its two stages. Computed by the
//    consumers themselves (the first version, kept for A/B), the four lanes of a quad each
//    redid them at the top of every stage: Q4_K took 148.7 us against Q4_0's 107.1 (H200 18:29
//    UTC), the same with W's copy left out (consumer-bound); with the helpers every stage,
//    113.7 us against Q4_0's 94.8 (20:16 UTC); once per block with the one-box loads, 108.5
//    against 92.3 (20:25: as every stage, within noise).
//  - Launched under programmatic dependent launch: the CTAs start (barriers, map prefetch)
//    while the X conversion before it drains; the producer waits for it (griddepcontrol.wait)
//    before its first copy. Consumers touch global memory only for Y, after data that came
//    through that wait.
// PTX ISA: wgmma.mma_async (register A), cp.async.bulk.tensor, mbarrier; hopper.md 1-4.
// Host side (maps, knobs, launch): quant_prefill_fused.cu, the one includer.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/quant_launch.cuh"
#include "cuda/quant_prefill_q4k_scales.cuh"
#include "cuda/quant_prefill_wgmma.cuh"
#include "cuda/tile/grid_dep.cuh"
#include "cuda/tile/tma.cuh"

namespace tc::cuda::quant::prefill {

using namespace tc::tile;

constexpr int kTileW = 128, kTileX = 128, kBK = 128;
constexpr int kDefaultCluster = 1;
constexpr int kXStage = kTileX * kBK * 2;  // 32 KB
constexpr int kHdrBox = 16;                // Q4_K: the block header box
constexpr int kHdrBytes = kTileW * kHdrBox;

// One kernel configuration. kWBox: bytes of a W row per stage (box width, shared-memory row
// stride). TMA needs the innermost box coordinate 16-byte aligned (an 8-byte one raised
// cudaErrorIllegalInstruction on the H200, 18:12 UTC): Q4_0's 72 bytes at 72 kb start 0 or 8
// bytes past 72 kb rounded down to 16, so 80 bytes hold them (the first TMA version read 112:
// as fast, 20:16 UTC); Q4_K's 64 qs bytes start 16-byte aligned. 80 = 20 words: the 8 rows a
// warp reads hit distinct banks.
// SC (Q4_K): who computes the scales. 0: the consumers, at the top of every stage (the first
// version). 1: warps 2-3 of the producer warpgroup, every stage. 2: the same warps, once per
// Q4_K block (every other stage) for both of its stages: their two SMSPs issue this work on
// top of their consumer warps' (a 13th warp to spread it over all four SMSPs would cap the
// kernel at 128 registers: four warps on one SMSP's 16K; ptxas spilled). Four ring stages (five
// fit Q4_0's shared memory but measured slower, 20:16 UTC).
template <int FMT_, int CL_, int SC>
struct Cfg {
  static constexpr int FMT = FMT_, CL = CL_, kWBox = 80, kStages = 4;
  static constexpr bool SCALES = SC > 0, kPerBlock = SC == 2;
  static constexpr int kHelperFirst = 64, kHelpers = 64;  // threads 64..127 when SCALES
  static constexpr int kThreads = 384;
  // Q4_K with per-block scales: one 80-byte box a stage, from the block's start on even
  // stages (header, qs 0..63) and from its byte 64 on odd ones (qs 64..127 at 16..79): only
  // the helpers read headers, on even stages. Otherwise (SC 0, 1) a 16-byte header box every
  // stage into a header area, then the qs box: 256 TMA rows a stage instead of 128.
  static constexpr bool kMerged = FMT == kQ4_K && SC == 2;
  static constexpr int kHdrArea = FMT == kQ4_K && !kMerged ? kHdrBytes : 0;
  static constexpr int kQsInRow = kMerged ? 16 : 0;  // Q4_K: qs bytes' offset in a slot row
  static constexpr int kHdrStride = kMerged ? kWBox : kHdrBox;  // Q4_K: between rows' headers
  static constexpr int kWSlot = kHdrArea + kTileW * kWBox;
  // SCALES: per stage, for each W row, per k64 sub-step {s lo, s hi, -m lo, -m hi} (half2).
  static constexpr int kScaleSlot = SCALES ? kTileW * 32 : 0;
  static constexpr size_t kSmem =
      1024 + kStages * (kXStage + kWSlot + kScaleSlot) + 3 * kStages * sizeof(mbarrier);
  static constexpr uint32_t kStageTx = kXStage + kTileW * kWBox + kHdrArea;
  static_assert(kSmem <= 227 * 1024, "shared memory per block");
  static_assert(!kPerBlock || SCALES, "per-block scales are computed by the helpers");
};

// Consumer warpgroups 1 and 2: W rows 64 (wg - 1) .. + 63 of the tile.
template <class C>
__device__ __forceinline__ void consume(uint8_t* xs, uint8_t* ws, const uint8_t* ss, mbarrier* full,
                                        mbarrier* empty, mbarrier* sfull, int n0, int m0, int nk,
                                        int rank, int M, int N, float* y) {
  constexpr int FMT = C::FMT, CL = C::CL, kStages = C::kStages, kWBox = C::kWBox;
  const int cw = threadIdx.x / 128 - 1, t = threadIdx.x % 128;
  const int g = (t % 32) / 4, c = t % 4, row = 64 * cw + 16 * (t / 32) + g;  // W row in tile
  float d[64];             // the tile's first wgmma overwrites it (scale-d 0)
  uint32_t frag[2][4][4];  // [sub-step buffer][k16 step][register]
  for (int kb = 0; kb < nk; ++kb) {
    const int stage = kb % kStages;
    mbar_wait(&full[stage], (kb / kStages) & 1);
    const uint8_t* hdr = ws + stage * C::kWSlot + row * C::kHdrStride;  // Q4_K, SC 0
    const uint8_t* wrow = ws + stage * C::kWSlot + C::kHdrArea + row * kWBox +
                          (FMT == kQ4_0 ? (72 * kb) % 16 : C::kQsInRow);  // packed qs
    const uint32_t xa = smem_addr(xs + stage * kXStage);
    __half2 sc[2][2][2], nm[2][2][2];  // Q4_K: [sub-step][row g / g + 8][low / high nibble]
    if constexpr (FMT == kQ4_K && C::SCALES) {
      mbar_wait(&sfull[stage], (kb / kStages) & 1);
      load_q4k_scale_slot(ss + stage * C::kScaleSlot + row * 32, sc, nm);
    } else if constexpr (FMT == kQ4_K) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          __half s, m;
          q4k_half_scales(hdr + r * 8 * C::kHdrStride, 4 * (kb & 1) + j, &s, &m);
          sc[j / 2][r][j % 2] = __half2half2(s);
          nm[j / 2][r][j % 2] = __half2half2(m);
        }
      }
    }
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      Q4Raw raw[2];  // shared-memory loads first: their latency overlaps the wait below
      load_q4_substep<FMT == kQ4_K>(wrow, s, kWBox, c, raw);
      wgmma_wait<1>();  // the group that read frag[s] (two sub-steps ago) has finished
      if (s == 1 && kb > 0 && t % 32 == 0) {  // stage kb - 1 is free, here and in the peer
        mbar_arrive(&empty[(kb + kStages - 1) % kStages]);
        if constexpr (CL == 2) mbar_arrive_cluster(&empty[(kb + kStages - 1) % kStages], rank ^ 1);
      }
      if constexpr (FMT == kQ4_0) {
        q4_0_frags(raw[0], frag[s][0], frag[s][1]);
        q4_0_frags(raw[1], frag[s][2], frag[s][3]);
      } else {
        q4_k_frags(raw[0], sc[s], nm[s], frag[s][0], frag[s][2]);
        q4_k_frags(raw[1], sc[s], nm[s], frag[s][1], frag[s][3]);
      }
      wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < 4; ++k16)
        wgmma_rs_m64n128k16(d, frag[s][k16],
                            make_smem_desc_sw128(xa + s * (kXStage / 2) + 32 * k16, 16, 1024),
                            (kb > 0 || s > 0 || k16 > 0) ? 1u : 0u);
      wgmma_commit();
    }
  }
  wgmma_wait<0>();
  // D row i = W row n, column j = X row m: Y[m][n]. For one register, the 8 lanes of a column
  // of the quad grid hold 8 consecutive n: 32-byte runs.
  const int n_base = n0 + 64 * cw + 16 * (t / 32) + g, m_base = m0 + 2 * c;
#pragma unroll
  for (int r = 0; r < 64; ++r) {
    const int n = n_base + 8 * ((r >> 1) & 1), m = m_base + 8 * (r >> 2) + (r & 1);
    if (n < N && m < M) y[size_t(m) * N + n] = d[r];
  }
}

// CL = 2: CTA pairs on adjacent W tiles (same X rows) share X: each CTA loads one of the
// stage's two X boxes and multicasts it to both, halving X's L2 -> SM traffic (X is reread by
// every W tile: 32 times at N = 4096). Each CTA's empty barriers then count both CTAs'
// consumer warps, since the peer's multicast writes into this CTA's stage too.
template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    prefill_q4_wgmma_kernel(const __grid_constant__ TmaMap map_x,
                            const __grid_constant__ TmaMap map_w,
                            const __grid_constant__ TmaMap map_h, int M, int N, int K, float* y) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int FMT = C::FMT, CL = C::CL, kStages = C::kStages;
  extern __shared__ uint8_t smem_raw[];
  // 1024-byte alignment by pointer arithmetic on the shared array (a cast through an integer
  // made the compiler lose the address space: generic loads instead of ld.shared).
  uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  uint8_t* xs = smem;                      // kStages x 32 KB, 1024-aligned (swizzle atoms)
  uint8_t* ws = smem + kStages * kXStage;  // kStages x kWSlot
  uint8_t* ss = ws + kStages * C::kWSlot;  // SCALES: kStages x kScaleSlot
  auto* full = reinterpret_cast<mbarrier*>(ss + kStages * C::kScaleSlot);
  mbarrier* empty = full + kStages;
  mbarrier* sfull = empty + kStages;
  const int n0 = blockIdx.x * kTileW, m0 = blockIdx.y * kTileX;
  const int nk = K / kBK;
  const int rank = CL == 2 ? int(cluster_ctarank()) : 0;
  if (threadIdx.x == 0) {
    tma_prefetch_map(&map_x);
    tma_prefetch_map(&map_w);
    if constexpr (C::kHdrArea > 0) tma_prefetch_map(&map_h);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);        // the producer's expect_tx arrival
      mbar_init(&empty[s], 8 * CL);  // lane 0 of each consumer warp (of both CTAs)
      mbar_init(&sfull[s], C::kHelpers);
    }
    mbar_fence_init();
  }
  if constexpr (CL == 2)
    cluster_sync();  // the peer's barriers exist before any multicast or remote arrive
  else
    __syncthreads();

  const int tid = threadIdx.x;
  const bool helper = C::SCALES && tid >= C::kHelperFirst && tid < C::kHelperFirst + 64;
  if (tid >= 128 && tid < 384) {  // warpgroups 1 and 2
    consume<C>(xs, ws, ss, full, empty, sfull, n0, m0, nk, rank, M, N, y);
  } else if (helper) {
    if constexpr (C::SCALES) q4k_scale_helper<C>(ws, ss, full, sfull, nk);
  } else if (tid == 0) {  // one thread issues every copy
    grid_dep_wait();      // X comes from the kernel before (PDL)
    for (int kb = 0; kb < nk; ++kb) {
      const int stage = kb % kStages;
      mbar_wait(&empty[stage], ((kb / kStages) & 1) ^ 1);
      uint8_t* xd = xs + stage * kXStage;
      uint8_t* wd = ws + stage * C::kWSlot;
      mbarrier* bar = &full[stage];
      mbar_arrive_expect_tx(bar, C::kStageTx);  // both X boxes, whoever loads them
      if constexpr (CL == 2) {
        tma_load_3d_multicast(xd + rank * (kXStage / 2), &map_x, bar, kb * kBK + 64 * rank, m0, 0,
                              uint16_t(3));
      } else {
        tma_load_3d(xd, &map_x, bar, kb * kBK, m0, 0);
        tma_load_3d(xd + kXStage / 2, &map_x, bar, kb * kBK + 64, m0, 0);
      }
      if constexpr (FMT == kQ4_0) {  // the stage's 4 blocks: 72 bytes at 72 kb
        tma_load_3d(wd, &map_w, bar, 72 * kb / 16 * 16, n0, 0);
      } else {  // block kb / 2: its header, and the qs bytes of half kb % 2
        if constexpr (C::kMerged) {
          tma_load_3d(wd, &map_w, bar, 144 * (kb / 2) + 64 * (kb & 1), n0, 0);
        } else {
          tma_load_3d(wd, &map_h, bar, 144 * (kb / 2), n0, 0);
          tma_load_3d(wd + kHdrBytes, &map_w, bar, 144 * (kb / 2) + 16 + 64 * (kb & 1), n0, 0);
        }
      }
    }
  }
  // No CTA may exit while its peer can still multicast into it or arrive on its barriers.
  if constexpr (CL == 2) cluster_sync();
#endif
}

}  // namespace tc::cuda::quant::prefill
