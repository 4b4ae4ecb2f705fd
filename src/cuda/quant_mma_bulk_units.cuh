// The int8 MMA bulk kernel's per-lane work (quant_mma_bulk.cu): mma.sync m16n8k32 s8, and the
// A fragments of a unit (64 weights of each of the lane's two rows g and g + 8: two Q4_0 /
// Q8_0 blocks, a quarter of a Q4_K super-block) built from the stage in shared memory as raw
// int8 quants, with their row scales. Fragment maps: PTX ISA, "mma.m16n8k32" (.s8): lane =
// 4 g + t holds A rows g / g + 8 at k 4t..4t+3 (a0 / a1) and 16+4t.. (a2 / a3), B column g at
// k 4t.. (b0) and 16+4t.. (b1), C rows g / g + 8 at columns 2t, 2t + 1.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/gemv_quant_units.cuh"

namespace tc::cuda::quant::mma_bulk {

constexpr uint32_t kM4 = 0x0F0F0F0Fu;

// c = A B (the accumulators start at 0).
__device__ __forceinline__ void mma_s8(int* c, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                       uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%10,%10,%10};"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0));
}

__device__ __forceinline__ uint32_t ld32(const uint8_t* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

// One 32-element block of the unit for both rows of this lane (g: r = 0, g + 8: r = 1): the
// A fragment (a0 = row g k 4t.., a1 = row g+8, a2 / a3 the same at k 16 + 4t) and the row
// scales (Q4_K: d * sc and dmin * m).
struct BlockA {
  uint32_t a[4];
  float d[2], mn[2];
};

// The unit's two blocks for the lane's rows, decoded from the stage (rows g and g + 8 at `r0`
// and r0 + 8 stride). CENTRED (Q4_0 only): the codes are 16 (q - 8) as signed bytes (q ^ 8 in
// the high nibble, a low one of 0: no offset to take out of the sums), so the caller scales the
// sums by 1 / 16 (exact; quant_mma_xreg.cu's int8 path folds it into X's scales).
template <int FMT, bool CENTRED = false>
__device__ __forceinline__ void load_unit(const uint8_t* r0, uint32_t stride, int u, int t,
                                          BlockA* blk) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const uint8_t* p = r0 + r * 8 * stride;
    if constexpr (FMT == kQ4_0) {  // bytes 0-1 d, 2-17 qs; 18-19 d, 20-35 qs
      const uint8_t* q = p + 36 * u;
      const uint32_t w0 = ld32(q), w4 = ld32(q + 16);
      const uint32_t qa = __funnelshift_r(ld32(q + 4 * t), ld32(q + 4 * t + 4), 16);
      const uint32_t qb = ld32(q + 20 + 4 * t);
      blk[0].d[r] = h2f(uint16_t(w0));
      blk[1].d[r] = h2f(uint16_t(w4 >> 16));
      if constexpr (CENTRED) {  // every nibble q ^ 8; the low ones moved up, the high in place
        constexpr uint32_t kHi = 0xF0F0F0F0u;
        const uint32_t ca = qa ^ 0x88888888u, cb = qb ^ 0x88888888u;
        blk[0].a[r] = (ca << 4) & kHi;
        blk[0].a[2 + r] = ca & kHi;
        blk[1].a[r] = (cb << 4) & kHi;
        blk[1].a[2 + r] = cb & kHi;
      } else {
        blk[0].a[r] = qa & kM4;             // elements 4t.. are low nibbles of qs[4t..]
        blk[0].a[2 + r] = (qa >> 4) & kM4;  // elements 16 + 4t.. the high ones
        blk[1].a[r] = qb & kM4;
        blk[1].a[2 + r] = (qb >> 4) & kM4;
      }
      blk[0].mn[r] = blk[1].mn[r] = 0.0f;
    } else if constexpr (FMT == kQ8_0) {  // bytes 0-1 d, 2-33 qs; 34-35 d, 36-67 qs
      const uint8_t* q = p + 68 * u;
      const uint32_t w0 = ld32(q), w8 = ld32(q + 32);
      blk[0].d[r] = h2f(uint16_t(w0));
      blk[1].d[r] = h2f(uint16_t(w8 >> 16));
      blk[0].a[r] = __funnelshift_r(ld32(q + 4 * t), ld32(q + 4 * t + 4), 16);
      blk[0].a[2 + r] = __funnelshift_r(ld32(q + 16 + 4 * t), ld32(q + 20 + 4 * t), 16);
      blk[1].a[r] = ld32(q + 36 + 4 * t);
      blk[1].a[2 + r] = ld32(q + 52 + 4 * t);
      blk[0].mn[r] = blk[1].mn[r] = 0.0f;
    } else {  // Q4_K: super-block u / 4 of the chunk, quant bytes 32c.. (c = u % 4)
      const uint8_t* b = p + 144 * (u >> 2);
      const int c = u & 3;
      const uint4 head = *reinterpret_cast<const uint4*>(b);
      const uint32_t w0 = ld32(b + 16 + 32 * c + 4 * t), w1 = ld32(b + 32 + 32 * c + 4 * t);
      const float d = h2f(uint16_t(head.x)), dmin = h2f(uint16_t(head.x >> 16));
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // sub-block 2c + h: nibble h of the chunk's bytes
        int sc, mn;
        q4k_scale_min_words(2 * c + h, head.y, head.z, head.w, &sc, &mn);
        blk[h].d[r] = d * float(sc);
        blk[h].mn[r] = dmin * float(mn);
        blk[h].a[r] = (w0 >> (4 * h)) & kM4;
        blk[h].a[2 + r] = (w1 >> (4 * h)) & kM4;
      }
    }
  }
}

}  // namespace tc::cuda::quant::mma_bulk
