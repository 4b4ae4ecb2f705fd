// Device-side block decoding shared by the quantized kernels (GGUF layouts, src/quant/blocks.h).
// The f32 group decoder evaluates like the reference dequantizers (explicit _rn products, no
// FMA contraction), so the v1 and prefill paths see the very weights the tests' float64
// reference is built from.
#pragma once

#include <cuda_fp16.h>
#include <tc/tc.h>

#include <cstdint>
#include <type_traits>

namespace tc::cuda::quant {

enum Fmt : int { kQ4_0 = 0, kQ8_0 = 1, kQ4_K = 2, kQ6_K = 3 };

// X's element kinds, shared by the 8-bit-activation decode kernels (the bulk GEMV, the f16 MMA
// and its X-in-registers form, quant_mma_b32*, quant_mma_bulk.cu): a runtime value in the kernel
// parameters, not a template parameter (no kernel instance per kind). A half value is widened to
// f32 (exact) and then takes the f32 path, so the results are those of X widened to f32, bit for
// bit.
// kXQ8: X given as Q8_0 blocks (GGUF's block_q8_0: an f16 scale and 32 int8 codes), read by the
// bulk GEMV only (bulk_x_kind in gemv_quant_bulk.cu), whose codes are then X's own; x_kind()
// never returns it, so the 8-bit-activation MMA kernels decline Q8_0 X through x_kind_ok (the
// f32-only kernels through their x_dtype == F32 checks).
enum XKind : int { kXF32 = 0, kXF16 = 1, kXBF16 = 2, kXQ8 = 3 };

// The kind of X of dtype x; -1 for a dtype the kernels do not read.
__host__ __device__ constexpr int x_kind(tc_dtype_t x) {
  return x == TC_DTYPE_F32 ? kXF32 : x == TC_DTYPE_F16 ? kXF16 : x == TC_DTYPE_BF16 ? kXBF16 : -1;
}

// Two halves of kind xk (f16 or bf16) in a 32-bit word (the lower address in the low bits) as
// f32.
__device__ __forceinline__ float2 widen_x2(uint32_t w, int xk) {
  if (xk == kXF16) return __half22float2(*reinterpret_cast<const __half2*>(&w));
  return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xFFFF0000u));
}

// Eight halves of kind xk (a 16-byte word) as f32: elements 0..3 in lo, 4..7 in hi.
__device__ __forceinline__ void widen_x8(uint4 r, int xk, float4& lo, float4& hi) {
  const float2 a = widen_x2(r.x, xk), b = widen_x2(r.y, xk);
  const float2 c = widen_x2(r.z, xk), d = widen_x2(r.w, xk);
  lo = make_float4(a.x, a.y, b.x, b.y);
  hi = make_float4(c.x, c.y, d.x, d.y);
}

// Runs f(std::integral_constant<int, kind>{}) for X's kind xk. The f16 MMA's and the
// X-in-registers MMA's loops that load X are compiled once per kind this way (the b32 helpers
// load raw words first and widen after, the int8 MMA's quantize kernel loads in straight-line
// code, so a run-time branch costs them nothing): with the kind a run-time branch inside each
// item's load, an item's widening (which waits for its loads) sat between its loads and the next
// item's, so the loads of a thread's items went out one round trip at a time (H200, 7B batch 8:
// +5-7% for Q8_0 / Q4_K, f32 X included). The bulk GEMV keeps its run-time branch: at M = 1 a
// thread quantizes one item of X (two at K = 11008), and its 7B step measured 1.5% slower for Q4_K,
// 0.6% for Q4_0 with f32 X, 0.5% faster for Q8_0, with a loop per kind (H200 06:21 / 06:29 UTC).
template <class F>
__device__ __forceinline__ void with_x_kind(int xk, F&& f) {
  if (xk == kXF16)
    f(std::integral_constant<int, kXF16>{});
  else if (xk == kXBF16)
    f(std::integral_constant<int, kXBF16>{});
  else
    f(std::integral_constant<int, kXF32>{});
}

__device__ __forceinline__ float h2f(uint16_t h) {
  return __half2float(__ushort_as_half(h));
}

__device__ __forceinline__ uint16_t ld_u16(const uint8_t* p) {
  return *reinterpret_cast<const uint16_t*>(p);  // blocks are 2-byte aligned
}

// get_scale_min_k4 of ggml: sub-block j's 6-bit scale and min from a Q4_K scales[12].
__device__ __forceinline__ void q4k_scale_min(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

__host__ __device__ constexpr int block_elems(int fmt) {
  return fmt == kQ4_K || fmt == kQ6_K ? 256 : 32;
}
__host__ __device__ constexpr int block_bytes(int fmt) {
  return fmt == kQ4_0 ? 18 : fmt == kQ8_0 ? 34 : fmt == kQ4_K ? 144 : 210;
}

// Elements 32*g .. 32*g+31 of a row, as the reference dequantizer computes them.
__device__ __forceinline__ void decode_group32(int fmt, const uint8_t* row, int g, float* out) {
  if (fmt == kQ4_0) {
    const uint8_t* b = row + 18 * g;
    const float d = h2f(ld_u16(b));
    for (int j = 0; j < 16; ++j) {
      out[j] = __fmul_rn(static_cast<float>((b[2 + j] & 15) - 8), d);
      out[j + 16] = __fmul_rn(static_cast<float>((b[2 + j] >> 4) - 8), d);
    }
  } else if (fmt == kQ8_0) {
    const uint8_t* b = row + 34 * g;
    const float d = h2f(ld_u16(b));
    for (int j = 0; j < 32; ++j) out[j] = __fmul_rn(static_cast<float>(int8_t(b[2 + j])), d);
  } else if (fmt == kQ4_K) {
    const uint8_t* b = row + 144 * (g / 8);
    const int j = g % 8, c = j / 2, shift = 4 * (j & 1);
    const float d = h2f(ld_u16(b)), dmin = h2f(ld_u16(b + 2));
    int sc, m;
    q4k_scale_min(j, b + 4, &sc, &m);
    const float d1 = __fmul_rn(d, float(sc)), m1 = __fmul_rn(dmin, float(m));
    const uint8_t* q = b + 16 + 32 * c;
    for (int l = 0; l < 32; ++l) out[l] = __fsub_rn(__fmul_rn(d1, float((q[l] >> shift) & 15)), m1);
  } else {  // Q6_K: ql[128] qh[64] scales[16] d
    const uint8_t* b = row + 210 * (g / 8);
    const float d = h2f(ld_u16(b + 208));
    const int e0 = 32 * (g % 8), n = e0 >> 7, gg = (e0 >> 5) & 3;
    for (int l = 0; l < 32; ++l) {
      const int lo = (b[64 * n + l + 32 * (gg & 1)] >> (4 * (gg >> 1))) & 0xf;
      const int hi = (b[128 + 32 * n + l] >> (2 * gg)) & 3;
      const int sc = int8_t(b[192 + ((e0 + l) >> 4)]);
      out[l] = __fmul_rn(__fmul_rn(d, float(sc)), float((lo | (hi << 4)) - 32));
    }
  }
}

// 8-bit activations, ggml's Q8 convention: per 32 values the scale amax / 127, codes rounded to
// nearest. The largest magnitude of a float4, the inverse scale of a block, and four values
// times that inverse scale packed into one int8x4 word (added to `sum`).
__device__ __forceinline__ float amax4(float4 v) {
  return fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
}
__device__ __forceinline__ float q8_inv_scale(float amax) {
  return amax > 0.0f ? 127.0f / amax : 0.0f;
}
__device__ __forceinline__ int q8_pack4(float4 v, float id, int& sum) {
  const int q0 = __float2int_rn(v.x * id), q1 = __float2int_rn(v.y * id);
  const int q2 = __float2int_rn(v.z * id), q3 = __float2int_rn(v.w * id);
  sum += q0 + q1 + q2 + q3;
  return int((q0 & 255) | ((q1 & 255) << 8) | ((q2 & 255) << 16) | (uint32_t(q3 & 255) << 24));
}

}  // namespace tc::cuda::quant
