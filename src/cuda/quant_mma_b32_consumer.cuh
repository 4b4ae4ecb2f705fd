// The batched decode kernel's consumer warpgroups and the epilogue of every thread
// (quant_mma_b32_kernel.cuh has the design and the kernel): consume decodes each stage's W rows
// into wgmma's register A fragments and multiplies them by the stage's X in shared memory
// (consume_nothing, Params::stream_only, only waits and releases); finish writes the tile's
// sums to Y or, with a K split outside clusters, to the workspace for the fixup
// (quant_mma_b32_fixup.cuh; inside clusters quant_mma_b32_cluster.cuh's finish_cluster).
// Templated on the Cfg and, like the helpers, on the Params type, so that this file needs
// nothing of the kernel's.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda/quant_mma_b32_fixup.cuh"
#include "cuda/quant_mma_b32_helpers.cuh"
#include "cuda/quant_mma_b32_q8.cuh"
#include "cuda/quant_mma_b32_wgmma.cuh"
#include "cuda/quant_prefill_wgmma.cuh"
#include "cuda/tile/grid_dep.cuh"

namespace tc::cuda::quant::b32 {

using namespace tc::tile;

// Q4_0 fragments as q4_0_frags (quant_prefill_wgmma.cuh) with one shift per word instead of
// three: the high nibbles are taken in place, (byte & 0xF0) | 0x6400 being the half 1024 + 16 q,
// and (1024 + 16 q) / 16 - 72 = q - 8 in one HFMA2 (exact: small integers), where the low
// nibbles subtract 1032 (HSUB2): the same instruction count as the decode before, which took
// (1024 + 16 q - 1152) d = 16 (q - 8) d and needed X / 16 at k 16..31 of every block, so a
// convert kernel ahead of every launch even where X came in f16 (H200 2026-11-30 11:45 UTC
// traces, 7B step at batch 32: that kernel's dependency hop held the grid wait 2.6-4.6 us
// after the previous launch's end, against 0.5-1.8 for Q4_K, which reads f16 X as it is).
__device__ __forceinline__ __half2 nib2_hi(uint32_t word) {
  uint32_t h;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(h) : "r"(word), "n"(0x00F000F0), "r"(0x64006400u));
  return *reinterpret_cast<const __half2*>(&h);
}
__device__ __forceinline__ void q4_0_frags_inplace(const Q4Raw& raw, uint32_t (&lo)[4],
                                                   uint32_t (&hi)[4]) {
  const __half2 bias = __float2half2_rn(1032.0f), sixteenth = __float2half2_rn(0.0625f),
                bias_hi = __float2half2_rn(-72.0f);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const __half2 d = __half2half2(raw.d[r]);
    const uint32_t w = raw.w[r], w8 = w >> 8;
    lo[r] = bits(__hmul2(__hsub2(nib2(w, 0), bias), d));
    lo[2 + r] = bits(__hmul2(__hsub2(nib2(w8, 0), bias), d));
    hi[r] = bits(__hmul2(__hfma2(nib2_hi(w), sixteenth, bias_hi), d));
    hi[2 + r] = bits(__hmul2(__hfma2(nib2_hi(w8), sixteenth, bias_hi), d));
  }
}

// Params::stream_only: wait for each stage (and what the helpers add to it), release it.
template <class C>
__device__ __forceinline__ void consume_nothing(mbarrier* full, mbarrier* empty, mbarrier* sfull,
                                                mbarrier* xfull, bool xin, int nk,
                                                float (&d)[C::NX / 2]) {
  constexpr int S = C::kStages;
  for (int kb = 0; kb < nk; ++kb) {
    const int stage = kb % S;
    mbar_wait(&full[stage], (kb / S) & 1);
    if (xin) mbar_wait(&xfull[stage], (kb / S) & 1);
    if (C::FMT == kQ4_K) mbar_wait(&sfull[stage], (kb / S) & 1);
    if (threadIdx.x % 32 == 0) mbar_arrive(&empty[stage]);
  }
#pragma unroll
  for (int r = 0; r < C::NX / 2; ++r) d[r] = 0.f;
  // Without X's copies (TC_QUANT_B32_ABLATE=w) nothing above waited for the producer's grid
  // dependency wait: the partials, Y and the arrival words written next must not overtake the
  // previous grid under PDL (review, 2026-11-30).
  grid_dep_wait();
}

// Consumer warpgroup cw: W rows 64 cw .. + 63 of the tile, stages kb0 .. kb0 + nk - 1 of K.
template <class C>
__device__ __forceinline__ void consume(uint8_t* xs, uint8_t* ws, const uint8_t* ss, mbarrier* full,
                                        mbarrier* empty, mbarrier* sfull, mbarrier* xfull, bool xin,
                                        int kb0, int nk, float (&d)[C::NX / 2],
                                        unsigned long long* tr = nullptr) {
  constexpr int FMT = C::FMT, S = C::kStages;
  const int cw = threadIdx.x / 128 - 1, t = threadIdx.x % 128;
  const int c = t % 4, row = 64 * cw + 16 * (t / 32) + (t % 32) / 4;
  uint32_t frag[2][4][4];  // [sub-step buffer][k16 step][register]
  for (int kb = 0; kb < nk; ++kb) {
    const int stage = kb % S, kg = kb0 + kb;
    mbar_wait(&full[stage], (kb / S) & 1);
    if (xin) mbar_wait(&xfull[stage], (kb / S) & 1);
    if (tr && kb == 0 && threadIdx.x == 128) tr[2] = bulk_trace::now_ns();
    // Where the stage begins in its W rows: Q4_0 / Q8_0 one-stage boxes start at 72 kg /
    // 136 kg rounded down to 16 bytes, pair boxes at the stage (C::w_off); Q4_K's at a
    // block's start or its byte 64 (qs from byte 16 of the box).
    const int w0 = FMT == kQ4_K   ? 16
                   : C::PAIR      ? 0
                   : FMT == kQ4_0 ? (72 * kg) % 16
                                  : (136 * kg) % 16;
    const uint8_t* wrow = ws + C::w_off(stage) + row * C::kWBox + w0;
    // The stage's B descriptor; the sub-steps' and k16 steps' offsets are added to its address
    // field (bits 0-13, in 16-byte units: shared addresses < 256 KB cannot carry out of it).
    // Built per wgmma with make_smem_desc_sw128, it cost ~6 uniform instructions each.
    const uint64_t xd = make_smem_desc_sw128(smem_addr(xs + stage * C::kXStage), 16, 1024);
    __half2 sc[2][2][2], nm[2][2][2];  // Q4_K: [sub-step][row g / g + 8][low / high nibble]
    if constexpr (FMT == kQ4_K) {
      mbar_wait(&sfull[stage], (kb / S) & 1);
      load_q4k_scale_slot(ss + stage * C::kScaleSlot + row * 32, sc, nm);
    }
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      // Shared-memory loads first: their latency overlaps the wait below.
      using Raw = std::conditional_t<FMT == kQ8_0, Q8Raw, Q4Raw>;
      Raw raw[2];
      if constexpr (FMT == kQ8_0)
        load_q8_substep(wrow, s, C::kWBox, c, raw);
      else
        load_q4_substep<FMT == kQ4_K>(wrow, s, C::kWBox, c, raw);
      wgmma_wait<1>();  // the group that read frag[s] (two sub-steps ago) has finished
      if (s == 1 && kb > 0 && t % 32 == 0) mbar_arrive(&empty[(kb + S - 1) % S]);
      if constexpr (FMT == kQ4_0) {
        q4_0_frags_inplace(raw[0], frag[s][0], frag[s][1]);
        q4_0_frags_inplace(raw[1], frag[s][2], frag[s][3]);
      } else if constexpr (FMT == kQ8_0) {
        q8_0_frags(raw[0], frag[s][0], frag[s][1]);
        q8_0_frags(raw[1], frag[s][2], frag[s][3]);
      } else {
        q4_k_frags(raw[0], sc[s], nm[s], frag[s][0], frag[s][2]);
        q4_k_frags(raw[1], sc[s], nm[s], frag[s][1], frag[s][3]);
      }
      wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < 4; ++k16)
        wgmma_rs_n<C::NX>(d, frag[s][k16], xd + uint64_t((s * C::kXHalf + 32 * k16) >> 4),
                          (kb > 0 || s > 0 || k16 > 0) ? 1u : 0u);
      wgmma_commit();
    }
  }
  wgmma_wait<0>();
}

// The tile's sums: straight to Y (one split), else this split's partial to the workspace and,
// in the last CTA of the tile to arrive, the splits added in order into Y.
template <class C, class Params>
__device__ __forceinline__ void finish(const Params& P, const float (&d)[C::NX / 2], bool consumer,
                                       int* flag, int tile, int split) {
  const int n0 = tile * C::kRows;
  const int t = threadIdx.x % 128, cw = threadIdx.x / 128 - 1;
  const int rr = 64 * cw + 16 * (t / 32) + (t % 32) / 4, mb = 2 * (t % 4);
  // D register r: W row rr + 8 ((r >> 1) & 1), X row mb + 8 (r >> 2) + (r & 1).
  if (P.splits == 1) {
    if (!consumer) return;
#pragma unroll
    for (int r = 0; r < C::NX / 2; ++r) {
      const int n = n0 + rr + 8 * ((r >> 1) & 1), m = mb + 8 * (r >> 2) + (r & 1);
      if (n < P.N && m < P.M) P.y[size_t(m) * P.N + n] = d[r];
    }
    return;
  }
  float* part = P.part + (size_t(split) * P.tiles + tile) * C::NX * C::kRows;
  if (consumer) {
#pragma unroll
    for (int r = 0; r < C::NX / 2; ++r)
      part[(mb + 8 * (r >> 2) + (r & 1)) * C::kRows + rr + 8 * ((r >> 1) & 1)] = d[r];
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long old = *reinterpret_cast<volatile unsigned long long*>(&P.cnt[tile]), seen;
    unsigned arrived;
    do {
      seen = old;
      arrived = (seen >> 8) == P.token ? unsigned(seen & 0xff) + 1 : 1u;
      old = atomicCAS(&P.cnt[tile], seen, P.token << 8 | arrived);
    } while (old != seen);
    *flag = int(arrived) == P.splits;
  }
  __syncthreads();
  if (!*flag) return;
  __threadfence();
  const int rows = min(C::kRows, P.N - n0), mm = min(P.M, C::NX);
  const size_t sstride = size_t(P.tiles) * C::NX * C::kRows;
  const float* p0 = P.part + size_t(tile) * C::NX * C::kRows;
  if (P.fixup == kFixupElem) {
    fixup_elem<C>(P, p0, sstride, mm, rows, n0);
  } else if (P.fixup == kFixupVec8) {
    fixup_vec<C, 1, 8>(P, p0, sstride, mm, rows, n0);
  } else if (P.splits <= 3) {  // up to 12 loads in flight a thread: 4 items x 3 splits
    fixup_vec<C, 4, 3>(P, p0, sstride, mm, rows, n0);
  } else {  // 16: 2 items x 8 splits (4 x 4 spilled at 96 registers)
    fixup_vec<C, 2, 8>(P, p0, sstride, mm, rows, n0);
  }
  if (threadIdx.x == 0) P.cnt[tile] = 0;  // ready for the next launch on this workspace
}

}  // namespace tc::cuda::quant::b32
