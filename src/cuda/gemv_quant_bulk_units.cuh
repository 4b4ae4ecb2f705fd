// The bulk GEMV's per-lane dots (gemv_quant_bulk_kernel.cuh): a unit's X held in registers and
// the dot of a unit (64 weights of a row: two Q4_0 / Q8_0 blocks at a 9 / 17-word stride, so 32
// lanes hit 32 banks; a Q4_K quarter block with 16-byte loads) with it: int8 words, dp4a, block
// scales in f32. X gets into the unit layout through gemv_quant_bulk_x.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/gemv_quant_units.cuh"

namespace tc::cuda::quant::bulk_gemv {

constexpr uint32_t kM4 = 0x0F0F0F0Fu;

__device__ __forceinline__ int dot4(int4 x, uint32_t a, uint32_t b, uint32_t c, uint32_t d, int s) {
  s = __dp4a(int(a), x.x, s);
  s = __dp4a(int(b), x.y, s);
  s = __dp4a(int(c), x.z, s);
  return __dp4a(int(d), x.w, s);
}

// The same with the weight bytes unsigned (0..255): a high nibble masked in place (q & 0xF0 =
// 16 q) is dotted without its shift, the 16 is taken out of the scale (exact: a power of two).
__device__ __forceinline__ int dp4a_us(uint32_t a, int b, int c) {
  int d;
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
__device__ __forceinline__ int dot4_hi(int4 x, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
                                       int s) {
  constexpr uint32_t kH4 = 0xF0F0F0F0u;
  s = dp4a_us(a & kH4, x.x, s);
  s = dp4a_us(b & kH4, x.y, s);
  s = dp4a_us(c & kH4, x.z, s);
  return dp4a_us(d & kH4, x.w, s);
}

// Q4_K chunk c's sub-block scales and mins, 2c in sc0 / m0 and 2c + 1 in sc1 / m1, from the
// super-block's first 16 bytes (d, dmin, scales[12] in head.y, .z, .w): q4k_scale_min_words' two
// cases (c < 2 and c >= 2 read different bytes) as selects on packed byte pairs, so a warp whose
// lanes hold different chunks does not diverge.
__device__ __forceinline__ void q4k_scale_min_pair(int c, uint4 head, int& sc0, int& sc1, int& m0,
                                                   int& m1) {
  const int hs = 16 * (c & 1);
  const bool lo = c < 2;
  const uint32_t a = (lo ? head.y : head.w) >> hs, b = (lo ? head.z : head.w) >> hs;
  const uint32_t sc = lo ? a & 0x3F3Fu : (a & 0x0F0Fu) | ((head.y >> hs >> 2) & 0x3030u);
  const uint32_t mn = lo ? b & 0x3F3Fu : ((b >> 4) & 0x0F0Fu) | ((head.z >> hs >> 2) & 0x3030u);
  sc0 = int(sc & 255u);
  sc1 = int(sc >> 8);
  m0 = int(mn & 255u);
  m1 = int(mn >> 8);
}

// Q4_K: the low-nibble dot of a chunk (its sub-block 2c: the low nibbles of the 32 bytes qa, qb)
// with X's words x0, x1.
__device__ __forceinline__ int q4k_lo_dot(int4 x0, int4 x1, uint4 qa, uint4 qb) {
  const int s = dot4(x0, qa.x & kM4, qa.y & kM4, qa.z & kM4, qa.w & kM4, 0);
  return dot4(x1, qb.x & kM4, qb.y & kM4, qb.z & kM4, qb.w & kM4, s);
}

// X rows 0..MT-1 at unit u, held in registers while the warp dots them with two weight rows.
template <int MT>
struct XUnit {
  int4 c[MT][4];  // the unit's 64 int8 values, 16 per int4
  int4 s[MT];     // {d0, d1, sum0, sum1} of its two 32-blocks
};

// The unit's X as unit_dot<FMT, MT, N16> takes it: for the Q4_0 nibble dots (N16) the scales
// over 16 and the sums times -128 ({d0 / 16, d1 / 16, -128 sum0, -128 sum1}), once per unit and
// lane (X in registers) or row pair rather than once per row.
template <int FMT, int MT, bool N16>
__device__ __forceinline__ void load_x(XUnit<MT>& x, int u, int U, int M,
                                       const int4* __restrict__ xq, const int4* __restrict__ xm) {
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    if (m > 0 && m >= M) break;  // row 0 always exists: no branch for it
    const int4* xc = xq + size_t(m) * 4 * U + u;
    x.c[m][0] = xc[0];
    x.c[m][1] = xc[U];
    x.c[m][2] = xc[2 * U];
    x.c[m][3] = xc[3 * U];
    int4 xs = xm[m * U + u];
    if constexpr (FMT == kQ4_0 && N16) {
      xs = make_int4(__float_as_int(__int_as_float(xs.x) * 0.0625f),
                     __float_as_int(__int_as_float(xs.y) * 0.0625f), -128 * xs.z, -128 * xs.w);
    }
    x.s[m] = xs;
  }
}

// acc[m] += this unit's 64 weights of the row times X row m's unit (x). N16 (Q4_0, Q4_K): the
// high nibbles are dotted as 16 q (one mask, no shift: ~8 fewer instructions a unit), the
// integer sums carry the 16 and the float scale takes 1/16 (Q4_0: bitwise the same result;
// Q4_K also multiplies its 6-bit scales and mins into the integer dots and sums, other
// roundings); false is the earlier form (TC_QUANT_BULK_DOT=0, an A/B knob).
template <int FMT, int MT, bool N16 = true>
__device__ __forceinline__ void unit_dot(const uint8_t* row, int u, int M, const XUnit<MT>& x,
                                         float* acc) {
  if constexpr (FMT == kQ4_0) {  // blocks 2u (bytes 0..17) and 2u+1 (18..35)
    const uint32_t* p = reinterpret_cast<const uint32_t*>(row + 36 * u);
    uint32_t w[9];
#pragma unroll
    for (int i = 0; i < 9; ++i) w[i] = p[i];
    const float d0 = h2f(uint16_t(w[0])), d1 = h2f(uint16_t(w[4] >> 16));
    uint32_t q0[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) q0[i] = __funnelshift_r(w[i], w[i + 1], 16);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m > 0 && m >= M) break;
      const int4 x0 = x.c[m][0], x1 = x.c[m][1], x2 = x.c[m][2], x3 = x.c[m][3], xs = x.s[m];
      // Element e < 16 of a block is the low nibble of qs[e], e >= 16 the high one of qs[e-16].
      if constexpr (N16) {  // 16 lo + 16 hi - 128 sum, X as load_x<kQ4_0, MT, true> gives it
        // (two independent chains per block, joined by one multiply-add)
        const int l0 = dot4(x0, q0[0] & kM4, q0[1] & kM4, q0[2] & kM4, q0[3] & kM4, 0);
        const int s0 = l0 * 16 + dot4_hi(x1, q0[0], q0[1], q0[2], q0[3], xs.z);
        const int l1 = dot4(x2, w[5] & kM4, w[6] & kM4, w[7] & kM4, w[8] & kM4, 0);
        const int s1 = l1 * 16 + dot4_hi(x3, w[5], w[6], w[7], w[8], xs.w);
        acc[m] = fmaf(d1 * __int_as_float(xs.y), float(s1),
                      fmaf(d0 * __int_as_float(xs.x), float(s0), acc[m]));
        continue;
      }
      int s0 = dot4(x0, q0[0] & kM4, q0[1] & kM4, q0[2] & kM4, q0[3] & kM4, 0);
      s0 = dot4(x1, (q0[0] >> 4) & kM4, (q0[1] >> 4) & kM4, (q0[2] >> 4) & kM4, (q0[3] >> 4) & kM4,
                s0);
      int s1 = dot4(x2, w[5] & kM4, w[6] & kM4, w[7] & kM4, w[8] & kM4, 0);
      s1 = dot4(x3, (w[5] >> 4) & kM4, (w[6] >> 4) & kM4, (w[7] >> 4) & kM4, (w[8] >> 4) & kM4, s1);
      acc[m] = fmaf(d1 * __int_as_float(xs.y), float(s1 - 8 * xs.w),
                    fmaf(d0 * __int_as_float(xs.x), float(s0 - 8 * xs.z), acc[m]));
    }
  } else if constexpr (FMT == kQ8_0) {  // blocks 2u (bytes 0..33) and 2u+1 (34..67)
    const uint32_t* p = reinterpret_cast<const uint32_t*>(row + 68 * u);
    uint32_t w[17];
#pragma unroll
    for (int i = 0; i < 17; ++i) w[i] = p[i];
    const float d0 = h2f(uint16_t(w[0])), d1 = h2f(uint16_t(w[8] >> 16));
    uint32_t q0[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) q0[i] = __funnelshift_r(w[i], w[i + 1], 16);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m > 0 && m >= M) break;
      const int4 x0 = x.c[m][0], x1 = x.c[m][1], x2 = x.c[m][2], x3 = x.c[m][3], xs = x.s[m];
      int s0 = dot4(x0, q0[0], q0[1], q0[2], q0[3], 0);
      s0 = dot4(x1, q0[4], q0[5], q0[6], q0[7], s0);
      int s1 = dot4(x2, w[9], w[10], w[11], w[12], 0);
      s1 = dot4(x3, w[13], w[14], w[15], w[16], s1);
      acc[m] = fmaf(d1 * __int_as_float(xs.y), float(s1),
                    fmaf(d0 * __int_as_float(xs.x), float(s0), acc[m]));
    }
  } else {  // Q4_K: super-block u / 4, chunk c = u % 4: sub-blocks 2c (low), 2c + 1 (high)
    const uint8_t* blk = row + 144 * (u >> 2);
    const int c = u & 3;
    const uint4 head = *reinterpret_cast<const uint4*>(blk);
    const uint4 qa = *reinterpret_cast<const uint4*>(blk + 16 + 32 * c);
    const uint4 qb = *reinterpret_cast<const uint4*>(blk + 32 + 32 * c);
    const float d = h2f(uint16_t(head.x)), dmin = h2f(uint16_t(head.x >> 16));
    if constexpr (N16) {
      int sc0, sc1, m0, m1;
      q4k_scale_min_pair(c, head, sc0, sc1, m0, m1);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        if (m > 0 && m >= M) break;
        const int4 x0 = x.c[m][0], x1 = x.c[m][1], x2 = x.c[m][2], x3 = x.c[m][3], xs = x.s[m];
        const int s0 = q4k_lo_dot(x0, x1, qa, qb);
        int s1 = dot4_hi(x2, qa.x, qa.y, qa.z, qa.w, 0);  // 16 x the high nibbles' dot
        s1 = dot4_hi(x3, qb.x, qb.y, qb.z, qb.w, s1);
        // Scales and mins times the integer dots and sums stay integers (exact in f32: below
        // 2^22), so a row-unit converts four values instead of eight.
        const float xa = __int_as_float(xs.x), xb = __int_as_float(xs.y);
        const float fw = fmaf(xb, float(sc1 * (s1 >> 4)), xa * float(sc0 * s0));
        const float fm = fmaf(xb, float(m1 * xs.w), xa * float(m0 * xs.z));
        acc[m] = fmaf(d, fw, fmaf(-dmin, fm, acc[m]));
      }
      return;
    }
    int sc0, m0, sc1, m1;
    q4k_scale_min_words(2 * c, head.y, head.z, head.w, &sc0, &m0);
    q4k_scale_min_words(2 * c + 1, head.y, head.z, head.w, &sc1, &m1);
    const float ds0 = d * float(sc0), ds1 = d * float(sc1);
    const float dm0 = dmin * float(m0), dm1 = dmin * float(m1);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m > 0 && m >= M) break;
      const int4 x0 = x.c[m][0], x1 = x.c[m][1], x2 = x.c[m][2], x3 = x.c[m][3], xs = x.s[m];
      const int s0 = q4k_lo_dot(x0, x1, qa, qb);
      int s1 =
          dot4(x2, (qa.x >> 4) & kM4, (qa.y >> 4) & kM4, (qa.z >> 4) & kM4, (qa.w >> 4) & kM4, 0);
      s1 = dot4(x3, (qb.x >> 4) & kM4, (qb.y >> 4) & kM4, (qb.z >> 4) & kM4, (qb.w >> 4) & kM4, s1);
      acc[m] += __int_as_float(xs.x) * (ds0 * float(s0) - dm0 * float(xs.z)) +
                __int_as_float(xs.y) * (ds1 * float(s1) - dm1 * float(xs.w));
    }
  }
}

}  // namespace tc::cuda::quant::bulk_gemv
