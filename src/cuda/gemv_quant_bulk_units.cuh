// The bulk GEMV's per-lane work (gemv_quant_bulk_kernel.cuh): X quantized per 32 into the unit
// layout in shared memory, a unit's X held in registers, and the dot of a unit (64 weights of a
// row: two Q4_0 / Q8_0 blocks at a 9 / 17-word stride, so 32 lanes hit 32 banks; a Q4_K quarter
// block with 16-byte loads) with it: int8 words, dp4a, block scales in f32.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/gemv_quant_units.cuh"
#include "cuda/quant_bulk.cuh"

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
      // Sub-blocks 2c and 2c + 1's 6-bit scales and mins (bytes 0 and 1 of sc and mn), with
      // selects instead of a branch on the lane's c (q4k_scale_min_words' two cases: c < 2 and
      // c >= 2 read different bytes of scales[12] = head.y, .z, .w).
      const int hs = 16 * (c & 1);
      const bool lo = c < 2;
      const uint32_t a = (lo ? head.y : head.w) >> hs, b = (lo ? head.z : head.w) >> hs;
      const uint32_t sc = lo ? a & 0x3F3Fu : (a & 0x0F0Fu) | ((head.y >> hs >> 2) & 0x3030u);
      const uint32_t mn = lo ? b & 0x3F3Fu : ((b >> 4) & 0x0F0Fu) | ((head.z >> hs >> 2) & 0x3030u);
      const int sc0 = int(sc & 255u), sc1 = int(sc >> 8), m0 = int(mn & 255u), m1 = int(mn >> 8);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        if (m > 0 && m >= M) break;
        const int4 x0 = x.c[m][0], x1 = x.c[m][1], x2 = x.c[m][2], x3 = x.c[m][3], xs = x.s[m];
        int s0 = dot4(x0, qa.x & kM4, qa.y & kM4, qa.z & kM4, qa.w & kM4, 0);
        s0 = dot4(x1, qb.x & kM4, qb.y & kM4, qb.z & kM4, qb.w & kM4, s0);
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
      int s0 = dot4(x0, qa.x & kM4, qa.y & kM4, qa.z & kM4, qa.w & kM4, 0);
      s0 = dot4(x1, qb.x & kM4, qb.y & kM4, qb.z & kM4, qb.w & kM4, s0);
      int s1 =
          dot4(x2, (qa.x >> 4) & kM4, (qa.y >> 4) & kM4, (qa.z >> 4) & kM4, (qa.w >> 4) & kM4, 0);
      s1 = dot4(x3, (qb.x >> 4) & kM4, (qb.y >> 4) & kM4, (qb.z >> 4) & kM4, (qb.w >> 4) & kM4, s1);
      acc[m] += __int_as_float(xs.x) * (ds0 * float(s0) - dm0 * float(xs.z)) +
                __int_as_float(xs.y) * (ds1 * float(s1) - dm1 * float(xs.w));
    }
  }
}

// X (M rows) to int8 per 32 (scale amax / 127, round to nearest, as in gemv_quant_q8.cu) into
// the unit layout, by all `threads` threads: four lanes per unit, each 16 values (one int4
// chunk), a 32-block's amax and sum shared by a lane pair, so the L2 round trip of X and the
// arithmetic after it are spread over 4x more threads than one unit per thread. An item is one
// lane's 16 values: its loads (x_load: raw words only), their decoding (x_finish), then its codes
// and the unit's scales and sums (x_store). A thread with two items issues both items' loads
// before it decodes either (quantize_x): decoding in x_load put the first item's use of its
// words between the two items' loads, and the second item's loads went out only after the
// first's round trip (ncu, 7B down projection at K = 11008, 2026-11-30).
// X given as Q8_0 (kXQ8): the item is half a block, its codes as they are (q), the block's scale
// in amax and the codes' sum in sum; nothing is quantized.
struct XItem {
  float4 v[4];
  float amax;
  int4 q;
  int sum;
};
// One item's words as loaded: f32 X r[0..3]; half X r[0..1]; Q8_0 X the codes' words (see
// x_load_q8) in r[0] and r[1].x, the scale's bits in r[1].y and the funnel shift that takes
// the codes out of the words (in bits: 0 or 16) in r[1].z. All zero for an item past the end:
// x_finish then gives values 0, amax 0 and sum 0 (the shuffles of x_store read them).
struct XRaw {
  uint4 r[4];
};
// Half h of Q8_0 block b of row m (34 bytes a block, 2-byte aligned: the codes of an odd block
// start on a 4-byte boundary, those of an even one 2 bytes past it): the words holding its 16
// codes and the block's scale. Rows are K / 32 * 34 bytes, a multiple of 16 (K % 256 == 0), and
// every load stays inside the block or the next one of the same row (K / 32 is even).
__device__ __forceinline__ void x_load_q8(const uint8_t* __restrict__ row, int b, int h,
                                          XRaw& raw) {
  const uint8_t* blk = row + 34 * b;
  uint32_t w[5] = {0, 0, 0, 0, 0};
  if (b & 1) {  // codes at blk + 2 + 16 h, 4-byte aligned
    const uint32_t* p = reinterpret_cast<const uint32_t*>(blk + 2 + 16 * h);
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = __ldg(p + i);
  } else {  // blk is 4-byte aligned: five words from blk + 16 h, codes 2 bytes into them
    const uint32_t* p = reinterpret_cast<const uint32_t*>(blk + 16 * h);
#pragma unroll
    for (int i = 0; i < 5; ++i) w[i] = __ldg(p + i);
  }
  raw.r[0] = make_uint4(w[0], w[1], w[2], w[3]);
  raw.r[1] =
      make_uint4(w[4], __ldg(reinterpret_cast<const unsigned short*>(blk)), (b & 1) ? 0u : 16u, 0u);
}
// X's element kind (XKind, quant_dequant.cuh: a kernel argument, uniform, no more instances):
// f16 / bf16 X is widened to f32 exactly as loaded, so the codes are those of the f32 path on the
// widened X (half the bytes of X cross from L2 to each CTA).
__device__ __forceinline__ void x_load(const void* __restrict__ X, int xk, int K, int U, int total,
                                       int i, XRaw& raw) {
#pragma unroll
  for (int e = 0; e < 4; ++e) raw.r[e] = make_uint4(0u, 0u, 0u, 0u);
  if (i >= total) return;
  const int j = i & 3, u = (i >> 2) % U, m = (i >> 2) / U;
  if (xk == kXQ8) {  // lane j: block 2u + j / 2, half j % 2
    const uint8_t* row = static_cast<const uint8_t*>(X) + size_t(m) * (size_t(K) / 32 * 34);
    x_load_q8(row, 2 * u + (j >> 1), j & 1, raw);
    return;
  }
  const size_t at = size_t(m) * K + 64 * u + 16 * j;  // the item's first element
  if (xk == kXF32) {
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const float*>(X) + at);
#pragma unroll
    for (int e = 0; e < 4; ++e) raw.r[e] = __ldg(src + e);
  } else {  // 16 halves: two 16-byte loads
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(X) + at);
    raw.r[0] = __ldg(src);
    raw.r[1] = __ldg(src + 1);
  }
}
// The item's values and amax (f32 / half X) or codes, scale and sum (Q8_0 X).
__device__ __forceinline__ XItem x_finish(const XRaw& raw, int xk) {
  XItem it;
  it.amax = 0.0f;
  it.q = make_int4(0, 0, 0, 0);
  it.sum = 0;
#pragma unroll
  for (int e = 0; e < 4; ++e) it.v[e] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (xk == kXQ8) {
    const uint4 a = raw.r[0];
    const uint32_t w[5] = {a.x, a.y, a.z, a.w, raw.r[1].x}, sh = raw.r[1].z;
    uint32_t q[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) q[i] = __funnelshift_r(w[i], w[i + 1], sh);
    it.q = make_int4(int(q[0]), int(q[1]), int(q[2]), int(q[3]));
    it.amax = h2f(uint16_t(raw.r[1].y));
#pragma unroll
    for (int i = 0; i < 4; ++i) it.sum = __dp4a(int(q[i]), 0x01010101, it.sum);
    return it;
  }
  if (xk == kXF32) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const uint4 r = raw.r[e];
      it.v[e] = make_float4(__uint_as_float(r.x), __uint_as_float(r.y), __uint_as_float(r.z),
                            __uint_as_float(r.w));
    }
  } else {
    widen_x8(raw.r[0], xk, it.v[0], it.v[1]);
    widen_x8(raw.r[1], xk, it.v[2], it.v[3]);
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) it.amax = fmaxf(it.amax, amax4(it.v[e]));
  return it;
}
// All lanes of the warp call it (shuffles); lanes with i >= total store nothing. peer_xq /
// peer_xm (shared::cluster addresses; 0: none, never a real one since dynamic shared memory
// starts past the reserved first KB): the same stores into a cluster peer's X.
// coded (xk == kXQ8, uniform): the item holds its codes, scale and sum (x_load_q8).
__device__ __forceinline__ void x_store(const XItem& it, bool coded, int U, int total, int i,
                                        int4* xq, int4* xm, uint32_t peer_xq = 0,
                                        uint32_t peer_xm = 0) {
  const int j = i & 3, u = (i >> 2) % U, m = (i >> 2) / U;
  int wq[4] = {it.q.x, it.q.y, it.q.z, it.q.w}, sum = coded ? it.sum : 0;
  float d = it.amax;
  if (!coded) {
    const float amax = fmaxf(it.amax, __shfl_xor_sync(0xffffffffu, it.amax, 1));  // 32-block
    const float id = q8_inv_scale(amax);
#pragma unroll
    for (int e = 0; e < 4; ++e) wq[e] = q8_pack4(it.v[e], id, sum);
    d = amax / 127.0f;
  }
  sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  const float d1 = __shfl_xor_sync(0xffffffffu, d, 2);  // lane j + 2: the unit's 2nd block
  const int s1 = __shfl_xor_sync(0xffffffffu, sum, 2);
  if (i < total) {
    const size_t q = (size_t(m) * 4 + j) * U + u;
    const int4 c = make_int4(wq[0], wq[1], wq[2], wq[3]);
    const int4 s = make_int4(__float_as_int(d), __float_as_int(d1), sum, s1);
    xq[q] = c;
    if (j == 0) xm[m * U + u] = s;
    if (peer_xq != 0) {
      bulk::st_remote4(peer_xq + uint32_t(q) * 16, c);
      if (j == 0) bulk::st_remote4(peer_xm + uint32_t(m * U + u) * 16, s);
    }
  }
}
// pairs: where X has more items than threads (M = 1 at K = 11008: 688 items, 512 threads;
// M = 2 at K = 4096 with 8 warps) each thread issues the loads of two items before it
// quantizes either, so X costs one L2 round trip rather than two: each round's loads wait
// behind the weight copies in flight (docs/quant.md). The codes are the same either way.
// Items [i0, i1) only (multiples of 4: a unit's four lanes), also stored into a peer's X where
// peer_xq / peer_xm are given (the CTAs of a cluster quantize a part each).
__device__ __forceinline__ void quantize_x(const void* __restrict__ X, int xk, int M, int K, int U,
                                           int threads, int4* xq, int4* xm, bool pairs = true,
                                           int i0 = 0, int i1 = -1, uint32_t peer_xq = 0,
                                           uint32_t peer_xm = 0) {
  const int total = i1 < 0 ? M * U * 4 : i1;  // a multiple of 4: a unit's lanes all in or out
  const int tid = int(threadIdx.x), step = pairs && total - i0 > threads ? 2 * threads : threads;
  for (int i = i0; i < total; i += step) {
    XRaw a, b;
    x_load(X, xk, K, U, total, i + tid, a);
    if (step > threads) x_load(X, xk, K, U, total, i + threads + tid, b);
    x_store(x_finish(a, xk), xk == kXQ8, U, total, i + tid, xq, xm, peer_xq, peer_xm);
    if (step > threads)
      x_store(x_finish(b, xk), xk == kXQ8, U, total, i + threads + tid, xq, xm, peer_xq, peer_xm);
  }
}

}  // namespace tc::cuda::quant::bulk_gemv
