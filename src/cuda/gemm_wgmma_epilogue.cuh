// Epilogues of the sm_90a GEMM kernel: one consumer warpgroup's 64 x BN accumulator block
// written to C (from registers, or through shared memory and TMA stores) or, for split-K, to
// the 4-byte partial-sum buffer.
#pragma once

#include "cuda/gemm_wgmma_args.cuh"

namespace tc::cuda {

// Stores one consumer's 64 x BN accumulator block (see wgmma.cuh for the layout).
template <class OutT, int BN, class Acc>
__device__ __forceinline__ void store_tile(const WgmmaArgs& a, const Acc (&d)[BN / 2],
                                           const WorkUnit& u, i32 row_base) {
  const i32 l = threadIdx.x % 32, w = (threadIdx.x / 32) % 4;
  OutT* c = static_cast<OutT*>(a.c) + i64(u.b) * a.stride_c;
  const bool read_c = a.beta != 0.0f;
#pragma unroll
  for (int r = 0; r < BN / 2; r += 2) {
    const i32 row = row_base + 16 * w + l / 4 + 8 * ((r >> 1) & 1);
    const i32 col = u.n0 + 8 * (r >> 2) + 2 * (l % 4);
    if (row >= a.M || col >= a.N) continue;
    // Swapped operands (c_trans): (row, col) of the computed C^T is C[col][row], and the
    // pair's second element lies one C row further.
    OutT* p = c + (a.c_trans ? i64(col) * a.ldc + row : i64(row) * a.ldc + col);
    const i64 next = a.c_trans ? a.ldc : 1;
    const bool two = col + 1 < a.N;
    if constexpr (is_same<OutT, i32>::value) {  // int8 GEMM: exact integer epilogue
      i32 v0 = d[r], v1 = d[r + 1];
      if (read_c) {
        v0 += p[0];
        if (two) v1 += p[next];
      }
      p[0] = v0;
      if (two) p[next] = v1;
    } else {
      float v0 = a.alpha * d[r], v1 = a.alpha * d[r + 1];
      if (two && a.c_vec2) {
        if constexpr (sizeof(OutT) == 4) {
          float2 o = read_c ? *reinterpret_cast<float2*>(p) : float2{0.f, 0.f};
          *reinterpret_cast<float2*>(p) = float2{v0 + a.beta * o.x, v1 + a.beta * o.y};
        } else {
          if (read_c) {
            v0 += a.beta * to_f32(p[0]);
            v1 += a.beta * to_f32(p[1]);
          }
          *reinterpret_cast<u32*>(p) = pack2<OutT>(v0, v1);
        }
      } else {
        if (read_c) v0 += a.beta * to_f32(p[0]);
        p[0] = from_f32<OutT>(v0);
        if (two) {
          if (read_c) v1 += a.beta * to_f32(p[next]);
          p[next] = from_f32<OutT>(v1);
        }
      }
    }
  }
}

// Stores one consumer's 64 x BN block through its shared buffer `buf` (kWgmmaEpiBytes) with
// TMA: rounds of up to two 64-row x 128-byte boxes (box j of the tile covers columns
// j * 128 / sizeof(OutT) ..). Thread 0 of the warpgroup owns the bulk groups. The map ends at
// column a.n_tma (a 16-byte boundary); columns n_tma .. N - 1 (fewer than 16 bytes' worth,
// only in the last column tile) are stored from registers. beta == 0 on this path.
template <class OutT, int BN, class Acc>
__device__ __forceinline__ void store_tile_tma(const WgmmaArgs& a, const TmaMap* map_c,
                                               const Acc (&d)[BN / 2], const WorkUnit& u,
                                               i32 row_base, u8* buf, int cw) {
  constexpr int csz = sizeof(OutT);
  constexpr int box_cols = 128 / csz;
  constexpr int boxes = BN / box_cols;
  constexpr int per_round = boxes < 2 ? boxes : 2;
  constexpr int rounds = boxes / per_round;
  static_assert(per_round * 8192 <= kWgmmaEpiBytes, "epilogue buffer");
  const int tid = threadIdx.x % 128;
  const i32 l = tid % 32, w = tid / 32;
  const u32 base = smem_addr(buf);
  if (a.n_tma < a.N && u.n0 + BN > a.n_tma) {  // uniform: the tile with the ragged row end
    OutT* c = static_cast<OutT*>(a.c) + i64(u.b) * a.stride_c;
#pragma unroll
    for (int r = 0; r < BN / 2; r += 2) {
      const i32 row = row_base + 16 * w + l / 4 + 8 * ((r >> 1) & 1);
      const i32 col = u.n0 + 8 * (r >> 2) + 2 * (l % 4);  // even; n_tma is even too
      if (row >= a.M || col < a.n_tma || col >= a.N) continue;
      OutT* p = c + i64(row) * a.ldc + col;
      if constexpr (is_same<OutT, i32>::value) {
        p[0] = d[r];
        if (col + 1 < a.N) p[1] = d[r + 1];
      } else {
        p[0] = from_f32<OutT>(a.alpha * d[r]);
        if (col + 1 < a.N) p[1] = from_f32<OutT>(a.alpha * d[r + 1]);
      }
    }
  }
#pragma unroll
  for (int round = 0; round < rounds; ++round) {
    if (tid == 0) bulk_wait_read<0>();  // the previous stores have read the buffer
    named_barrier_sync(1 + cw, 128);
#pragma unroll
    for (int r = 0; r < BN / 2; r += 2) {
      const int col = 8 * (r >> 2) + 2 * (l % 4);  // tile-relative; col and col + 1
      if ((col / box_cols) / per_round != round) continue;
      const int row = 16 * w + l / 4 + 8 * ((r >> 1) & 1);
      const int byte = (col % box_cols) * csz;
      // 128B swizzle: the 16-byte chunk index is XORed with the row index mod 8.
      const u32 addr = base + ((col / box_cols) % per_round) * 8192 + row * 128 +
                       ((((byte >> 4) ^ row) & 7) << 4) + (byte & 15);
      if constexpr (csz == 2) {
        const u32 v = pack2<OutT>(a.alpha * d[r], a.alpha * d[r + 1]);
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
      } else if constexpr (is_same<OutT, i32>::value) {
        asm volatile("st.shared.v2.s32 [%0], {%1, %2};" ::"r"(addr), "r"(d[r]), "r"(d[r + 1])
                     : "memory");
      } else {
        asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(a.alpha * d[r]),
                     "f"(a.alpha * d[r + 1])
                     : "memory");
      }
    }
    fence_proxy_async();  // make the st.shared visible to the TMA unit
    named_barrier_sync(1 + cw, 128);
    if (tid == 0 && row_base < a.M) {
#pragma unroll
      for (int j = 0; j < per_round; ++j) {
        const i32 c0 = u.n0 + (round * per_round + j) * box_cols;
        if (c0 < a.n_tma) tma_store_3d(map_c, base + j * 8192, c0, row_base, u.b);
      }
      bulk_commit();
    }
  }
}

// Split-K: raw 4-byte partial sums, [batch][split][M][N].
template <int BN, class Acc>
__device__ __forceinline__ void store_partial(const WgmmaArgs& a, const Acc (&d)[BN / 2],
                                              const WorkUnit& u, i32 row_base) {
  const i32 l = threadIdx.x % 32, w = (threadIdx.x / 32) % 4;
  Acc* c = static_cast<Acc*>(a.partial) + (i64(u.b) * a.splits + u.s) * i64(a.M) * a.N;
#pragma unroll
  for (int r = 0; r < BN / 2; r += 2) {
    const i32 row = row_base + 16 * w + l / 4 + 8 * ((r >> 1) & 1);
    const i32 col = u.n0 + 8 * (r >> 2) + 2 * (l % 4);
    if (row >= a.M || col >= a.N) continue;
    Acc* p = c + i64(row) * a.N + col;
    p[0] = d[r];
    if (col + 1 < a.N) p[1] = d[r + 1];
  }
}

}  // namespace tc::cuda
