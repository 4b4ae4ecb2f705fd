// Transposed epilogue of the sm_90a GEMM kernel through shared memory (args.c_trans with
// args.c_stage): the planner swapped the operands (C^T = B^T A^T), so one consumer's 64 x BN
// block of the computed C^T holds, for each of its BN columns n', 64 contiguous elements of
// C row n'. The register epilogue (store_tile with c_trans) writes them as 2-byte stores that
// touch 8 C rows per warp instruction; here the block goes through the consumer's idle TMA-store
// buffer and each warp instruction writes one C row's 64 elements (128 bytes).
//
// 16-bit C with beta == 0 only (the planner's c_stage): values are rounded once, alpha applied,
// exactly as in store_tile, so both epilogues give the same bits. 128 C rows of 128 bytes
// (16 KB) per round, BN / 128 rounds (one at BN <= 128), two named barriers per round.
// H200, 2026-11-30 (docs/gemm.md, round 8): 4095x4097x4099's kernel 221 -> 212 us, the call
// 546 -> 556 TFLOP/s; still ~19 us over TMA stores on 4096^3 (the rounds are synchronous).
#pragma once

#include "cuda/gemm_wgmma_args.cuh"

namespace tc::cuda {

// Stores elements (2 l, 2 l + 1) of a C row segment (v: both, packed) of `valid` elements that
// starts at `row`; one warp covers 64 elements.
__device__ __forceinline__ void put_row_pair16(u16* row, int l, i32 valid, u32 v) {
  u16* h = row + 2 * l;
  const bool v0 = 2 * l < valid, v1 = 2 * l + 1 < valid;
  if ((reinterpret_cast<uintptr_t>(row) & 3) == 0) {  // uniform over the warp: the row start
    if (v1)
      *reinterpret_cast<u32*>(h) = v;
    else if (v0)
      h[0] = u16(v);
  } else {  // 2-byte aligned row: each lane stores (its left neighbour's second, its first)
    const u32 prev = __shfl_up_sync(0xffffffffu, v, 1);
    if (v0) {
      if (l > 0)
        *reinterpret_cast<u32*>(h - 1) = (prev >> 16) | (v << 16);
      else
        h[0] = u16(v);
    }
    // The second element when no right neighbour stores it.
    if (v1 && (l == 31 || 2 * l + 2 >= valid)) h[1] = u16(v >> 16);
  }
}

template <class OutT, int BN, class Acc>
__device__ __forceinline__ void store_tile_trans(const WgmmaArgs& a, const Acc (&d)[BN / 2],
                                                 const WorkUnit& u, i32 row_base, u8* buf, int cw) {
  static_assert(sizeof(OutT) == 2, "16-bit C only");
  constexpr int kRows = kWgmmaEpiBytes / 128;  // staged C rows per round (64 elements each)
  constexpr int rounds = BN > kRows ? BN / kRows : 1;
  static_assert(BN <= kRows || BN % kRows == 0, "epilogue rounds");
  const int tid = threadIdx.x % 128;
  const i32 l = tid % 32, w = tid / 32;
  const u32 base = smem_addr(buf);
  // Staged layout: 128-byte rows (one C row n', 64 m') of 8 chunks, the chunk index XOR the
  // row's low 3 bits, so a warp's st.shared (4 rows x 16 bytes) and ld.shared (one row) hit
  // distinct banks. d[r + e] (r = 0, 2, ..) is element (m', n') with m' = 16 w + l / 4 + 8 h,
  // h = (r / 2) % 2, and n' = 8 (r / 4) + 2 (l % 4) + e: its address is off[h][e] +
  // 1024 ((r / 4) % 16), precomputed here to keep registers for the accumulators.
  u32 off[2][2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int row = 2 * (l % 4) + e, byte = 2 * (16 * w + (l >> 2) + 8 * h);
      off[h][e] = base + row * 128 + ((((byte >> 4) ^ row) & 7) << 4) + (byte & 15);
    }
  }
  // Rounds are never skipped (a block below M or right of N still stages its accumulators): a
  // branch around the accumulator reads made ptxas serialize the main loop's wgmmas (C7520).
#pragma unroll
  for (int round = 0; round < rounds; ++round) {
    named_barrier_sync(1 + cw, 128);  // the previous round's (or tile's) reads are done
#pragma unroll
    for (int r = 0; r < BN / 2; r += 2) {
      if (8 * (r >> 2) / kRows != round) continue;  // columns 8 (r / 4) .. + 7: this round's
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const u16 v = from_f32<OutT>(a.alpha * d[r + e]).bits;
        asm volatile("st.shared.u16 [%0], %1;" ::"r"(off[(r >> 1) & 1][e] + 1024 * ((r >> 2) % 16)),
                     "h"(v)
                     : "memory");
      }
    }
    named_barrier_sync(1 + cw, 128);
    // Warp w writes rows w, w + 4, ..: all of its loads first, then the stores (against a
    // load-shuffle-store chain per row: no measurable change on the H200, 556 vs 553 TFLOP/s).
    constexpr int n_rows = BN < kRows ? BN : kRows, per_warp = n_rows / 4;
    u32 v[per_warp];
#pragma unroll
    for (int j = 0; j < per_warp; ++j) {
      const int i = w + 4 * j;
      const u32 addr = base + i * 128 + ((((l >> 2) ^ i) & 7) << 4) + 4 * (l & 3);
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v[j]) : "r"(addr) : "memory");
    }
    const i32 valid = a.M - row_base;  // C^T rows of this block inside M
    u16* c = reinterpret_cast<u16*>(static_cast<OutT*>(a.c) + i64(u.b) * a.stride_c + row_base);
    if (valid > 0) {
#pragma unroll
      for (int j = 0; j < per_warp; ++j) {
        const i32 n = u.n0 + round * kRows + w + 4 * j;
        if (n < a.N) put_row_pair16(c + i64(n) * a.ldc, l, valid, v[j]);  // uniform per warp
      }
    }
  }
}

}  // namespace tc::cuda
