// The bulk GEMV's X (gemv_quant_bulk_kernel.cuh): quantized per 32 by the consumer warps into
// the unit layout in shared memory that gemv_quant_bulk_units.cuh's load_x reads, or, for X given
// as Q8_0 blocks, its codes copied there as they are; optionally into a cluster peer's too.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/quant_bulk.cuh"
#include "cuda/quant_dequant.cuh"

namespace tc::cuda::quant::bulk_gemv {

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
