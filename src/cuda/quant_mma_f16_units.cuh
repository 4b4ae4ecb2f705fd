// The f16 MMA bulk kernel's per-lane work (quant_mma_f16.cu): the A fragments of mma.sync
// m16n8k16 (f16 in, f32 accumulate) built from a unit of the stage in shared memory, each weight
// dequantized once into f16 with its block scale folded in, so that the accumulators run over
// the whole K with no per-block epilogue; or (load_unit's RAW, Q4_0 / Q8_0 at M <= 8) as its
// exact quant, the block scales left for the caller to apply to each block's sums.
//
// A unit is 64 weights of each of the lane's rows g and g + 8 (two Q4_0 / Q8_0 blocks, a quarter
// of a Q4_K super-block: sub-blocks 2c and 2c + 1). For each 32-weight block h lane t = l % 4
// holds 8 weights per row, the elements xperm(t, 0..7) of the block, as four f16x2 words:
// frag[h][r][0..1] feed the first m16n8k16 (k 0..15 of the block in MMA order: a0 / a2 for row
// g, a1 / a3 for g + 8), frag[h][r][2..3] the second. Since the MMA sums over k, the order of
// k inside a block is free as long as B (the activations) uses the same: the X staging kernel
// writes X in this permuted order (16 bytes per lane and block, one LDS.128 gives both MMAs'
// b0 / b1). The order is what the nibble tricks give cheaply: a 32-bit word of 4 quant bytes
// yields bytes 0 and 2 with one lop3, bytes 1 and 3 after a shift.
//
// X comes as f32, f16 or bf16 (x_item, a runtime kind); every kind is rounded to f16 through f32.
//
// Nibble to f16: (q & 0xF) | 0x6400 is the f16 1024 + q; (q & 0xF0) | 0x6400 is 1024 + 16 q.
// Subtracting the exact offset first, then multiplying by the scale, rounds each weight once
// (an fma with a folded offset would round the offset times the scale instead).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/quant_dequant.cuh"
#include "cuda/tile/mma.cuh"

namespace tc::cuda::quant::mma_f16 {

// Element of a 32-block held at position i (0..7) of lane t's 16 bytes.
__host__ __device__ constexpr int xperm(int t, int i) {
  return (i < 4 ? 0 : 16) + 4 * t + ((i & 3) == 1 ? 2 : (i & 3) == 2 ? 1 : (i & 3));
}

__device__ __forceinline__ uint32_t ld32(const uint8_t* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}
__device__ __forceinline__ uint32_t lop_and_or(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(b), "r"(c));  // (a & b) | c
  return d;
}
__device__ __forceinline__ uint32_t hsub2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t hmul2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t hfma2(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
// f16x2 constants: both halves the same f16 bit pattern.
__host__ __device__ constexpr uint32_t h2c(uint32_t bits) {
  return bits | (bits << 16);
}
constexpr uint32_t kF1024 = 0x6400, kF1032 = 0x6408, kF1152 = 0x6480, kF64 = 0x5400, kF72 = 0x5480,
                   kF1over16 = 0x2C00;

// 4 nibbles of a word (bytes e .. e+3, low or high nibbles) to f16x2 (q - bias) * s (+ add):
// out[0] = elements (e, e+2), out[1] = (e+1, e+3). `off` is the f16x2 1024 + bias for the low
// nibbles ((1024 + q) - off) and 64 + bias for the high ones ((1024 + 16 q) / 16 - off), both
// exact. kRaw: q - bias alone (s and add not used).
template <bool kHigh, bool kRaw = false>
__device__ __forceinline__ void nib2(uint32_t w, uint32_t off, uint32_t s, uint32_t add,
                                     bool with_add, uint32_t* out) {
  const uint32_t m = kHigh ? 0x00F000F0u : 0x000F000Fu;
  const uint32_t v0 = lop_and_or(w, m, h2c(kF1024)), v1 = lop_and_or(w >> 8, m, h2c(kF1024));
  const uint32_t neg = off ^ 0x80008000u;
  const uint32_t q0 = kHigh ? hfma2(v0, h2c(kF1over16), neg) : hsub2(v0, off);
  const uint32_t q1 = kHigh ? hfma2(v1, h2c(kF1over16), neg) : hsub2(v1, off);
  if constexpr (kRaw) {
    out[0] = q0;
    out[1] = q1;
    return;
  }
  out[0] = with_add ? hfma2(q0, s, add) : hmul2(q0, s);
  out[1] = with_add ? hfma2(q1, s, add) : hmul2(q1, s);
}

// 4 int8 bytes of a word (e .. e+3) to f16x2 times s: out[0] = (e, e+2), out[1] = (e+1, e+3).
// kRaw: q alone (exact; s not used).
template <bool kRaw = false>
__device__ __forceinline__ void byte2(uint32_t w, uint32_t s, uint32_t* out) {
  const uint32_t u = w ^ 0x80808080u;  // q + 128, unsigned
  const uint32_t v0 = __byte_perm(u, h2c(0x6464), 0x4240), v1 = __byte_perm(u, h2c(0x6464), 0x4341);
  out[0] = kRaw ? hsub2(v0, h2c(kF1152)) : hmul2(hsub2(v0, h2c(kF1152)), s);
  out[1] = kRaw ? hsub2(v1, h2c(kF1152)) : hmul2(hsub2(v1, h2c(kF1152)), s);
}

// A unit is 64 weights of a row (two Q4_0 / Q8_0 blocks, a quarter of a Q4_K super-block).
__host__ __device__ constexpr int unit_bytes(int fmt) {
  return fmt == kQ8_0 ? 68 : 36;
}

// Elements e .. e + 3 of X (e % 4 == 0, kind XK) as f32: 16 bytes of f32 or 8 of halves. kLdg:
// X is global memory, read through the read-only path; false: any address space (a copy of X
// in shared memory).
template <int XK, bool kLdg = true>
__device__ __forceinline__ float4 x_load4(const void* __restrict__ X, size_t e) {
  if constexpr (XK == kXF32) {
    const float4* p = reinterpret_cast<const float4*>(X) + e / 4;
    if constexpr (kLdg) return __ldg(p);
    return *p;
  } else {
    const uint2* p = reinterpret_cast<const uint2*>(X) + e / 4;
    const uint2 r = kLdg ? __ldg(p) : *p;
    const float2 lo = widen_x2(r.x, XK), hi = widen_x2(r.y, XK);
    return make_float4(lo.x, lo.y, hi.x, hi.y);
  }
}

// Item i = (b cols + n) 4 + t of X in f16 in the fragments' order: the 8 elements xperm(t, 0..7)
// of block b of row n of X [M][K] (elements of kind XK, with_x_kind; zeros for n >= M, columns
// the MMA computes and nobody reads). .x/.y are the first m16n8k16's B (k 0..15 of the block in
// MMA order), .z/.w the second's.
template <int XK, bool kLdg = true>
__device__ __forceinline__ uint4 x_item(const void* __restrict__ X, int M, int K, int cols, int i) {
  const int t = i % 4, n = (i / 4) % cols, b = i / (4 * cols);
  if (n >= M) return make_uint4(0, 0, 0, 0);
  const size_t e = size_t(n) * K + 32 * b + 4 * t;
  const float4 v0 = x_load4<XK, kLdg>(X, e), v1 = x_load4<XK, kLdg>(X, e + 16);
  static_assert(xperm(1, 1) == 6 && xperm(1, 2) == 5 && xperm(1, 5) == 22, "xperm order");
  auto pack = [](float lo, float hi) {
    uint32_t d;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
  };
  return make_uint4(pack(v0.x, v0.z), pack(v0.y, v0.w), pack(v1.x, v1.z), pack(v1.y, v1.w));
}

// Output o of a 16-row pass's fragment (o = (nt * 4 + i) * 32 + l: C row l / 4 + 8 (i / 2),
// column 8 nt + 2 (l % 4) + i % 2) to Y [M][N], inside M x N.
__device__ __forceinline__ void store_frag_y(float* Y, int M, int N, int pass, int o, float v) {
  const int i = (o / 32) % 4, nt = o / 128, l = o % 32;
  const int64_t row = int64_t(pass) * 16 + l / 4 + 8 * (i >> 1);
  const int n = 8 * nt + 2 * (l % 4) + (i & 1);
  if (n < M && row < N) Y[size_t(n) * N + row] = v;
}

// frag[h][r][j]: block h of the unit, row g (r = 0) / g + 8 (r = 1), word j as above. d[h][r]:
// that block's scale where the fragments leave it out (load_unit's RAW).
struct UnitA {
  uint32_t frag[2][2][4];
  float d[2][2];
};

// The unit u of rows g (at r0) and g + 8 (r0 + 8 stride) for lane t; Q4_K: c = u % 4. RAW (Q4_0,
// Q8_0): the fragments hold q - 8 / q, exact, and A.d the block scales, for the caller to apply
// to each block's sums.
template <int FMT, bool RAW = false>
__device__ __forceinline__ void load_unit(const uint8_t* r0, uint32_t stride, int u, int t, int c,
                                          UnitA& A) {
  static_assert(!RAW || FMT != kQ4_K, "RAW: Q4_0 and Q8_0");
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const uint8_t* p = r0 + r * 8 * stride;
    if constexpr (FMT == kQ4_0) {  // bytes 0-1 d, 2-17 qs; 18-19 d, 20-35 qs
      const uint8_t* q = p + 36 * u;
      const uint32_t w0 = ld32(q), w4 = ld32(q + 16);
      const uint32_t qw[2] = {__funnelshift_r(ld32(q + 4 * t), ld32(q + 4 * t + 4), 16),
                              ld32(q + 20 + 4 * t)};
      const uint32_t s[2] = {__byte_perm(w0, 0, 0x1010), __byte_perm(w4, 0, 0x3232)};
      if constexpr (RAW) {
        A.d[0][r] = h2f(uint16_t(w0));
        A.d[1][r] = h2f(uint16_t(w4 >> 16));
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        // qs[4t..4t+3]: low nibbles are elements 4t.., high ones 16 + 4t..
        nib2<false, RAW>(qw[h], h2c(kF1032), s[h], 0, false, &A.frag[h][r][0]);
        nib2<true, RAW>(qw[h], h2c(kF72), s[h], 0, false, &A.frag[h][r][2]);
      }
    } else if constexpr (FMT == kQ8_0) {  // bytes 0-1 d, 2-33 qs; 34-35 d, 36-67 qs
      const uint8_t* q = p + 68 * u;
      const uint32_t w0 = ld32(q), w8 = ld32(q + 32);
      const uint32_t qw[2][2] = {{__funnelshift_r(ld32(q + 4 * t), ld32(q + 4 * t + 4), 16),
                                  __funnelshift_r(ld32(q + 16 + 4 * t), ld32(q + 20 + 4 * t), 16)},
                                 {ld32(q + 36 + 4 * t), ld32(q + 52 + 4 * t)}};
      const uint32_t s[2] = {__byte_perm(w0, 0, 0x1010), __byte_perm(w8, 0, 0x3232)};
      if constexpr (RAW) {
        A.d[0][r] = h2f(uint16_t(w0));
        A.d[1][r] = h2f(uint16_t(w8 >> 16));
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        byte2<RAW>(qw[h][0], s[h], &A.frag[h][r][0]);
        byte2<RAW>(qw[h][1], s[h], &A.frag[h][r][2]);
      }
    } else {  // Q4_K: super-block u / 4, quant bytes 32c.. (c = u % 4): sub-blocks 2c, 2c + 1
      const uint8_t* b = p + 144 * (u >> 2);
      const uint4 head = *reinterpret_cast<const uint4*>(b);
      const uint32_t w0 = ld32(b + 16 + 32 * c + 4 * t), w1 = ld32(b + 32 + 32 * c + 4 * t);
      // The 6-bit scales and mins of sub-blocks 2c, 2c + 1 as byte pairs (q4k_scale_min: bytes
      // 2c.. of scales[0..3] / [4..7] for c < 2, else bytes 2c - 4.. of scales[8..11] with the top
      // bits of [0..3] / [4..7]); c is the same for all of a warp's units, so the branch is too.
      const uint32_t sh = 16 * (c & 1), a0 = head.y >> sh, a1 = head.z >> sh;
      uint32_t scp, mnp;
      if (c < 2) {
        scp = a0 & 0x3F3Fu;
        mnp = a1 & 0x3F3Fu;
      } else {
        const uint32_t a2 = head.w >> sh;
        scp = (a2 & 0x0F0Fu) | ((a0 >> 2) & 0x3030u);
        mnp = ((a2 >> 4) & 0x0F0Fu) | ((a1 >> 2) & 0x3030u);
      }
      // Byte pairs to the f16x2 (v0, v1) exactly ((1024 + v) - 1024), times (d, d) and (-dmin,
      // -dmin): both sub-blocks' d sc and -dmin m, each rounded once.
      const uint32_t s01 = hmul2(hsub2(__byte_perm(scp, 0x6464, 0x5140), h2c(kF1024)),
                                 __byte_perm(head.x, 0, 0x1010));
      const uint32_t m01 = hmul2(hsub2(__byte_perm(mnp, 0x6464, 0x5140), h2c(kF1024)),
                                 __byte_perm(head.x, 0, 0x3232) ^ 0x80008000u);
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // sub-block 2c + h: nibble h of the chunk's bytes
        const uint32_t s = __byte_perm(s01, 0, h ? 0x3232 : 0x1010);
        const uint32_t m = __byte_perm(m01, 0, h ? 0x3232 : 0x1010);
        if (h == 0) {
          nib2<false>(w0, h2c(kF1024), s, m, true, &A.frag[h][r][0]);
          nib2<false>(w1, h2c(kF1024), s, m, true, &A.frag[h][r][2]);
        } else {
          nib2<true>(w0, h2c(kF64), s, m, true, &A.frag[h][r][0]);
          nib2<true>(w1, h2c(kF64), s, m, true, &A.frag[h][r][2]);
        }
      }
    }
  }
}

// Block h of the unit times X's B fragment b (this lane's 16 bytes of that block) into acc: the
// block's two m16n8k16. RAW (load_unit's): into fresh accumulators, then times the block's row
// scales into acc (C row g + 8 (i / 2)). One helper for the X-in-registers and pass-barrier
// kernels, so that both add in the same order (the same bits).
template <bool RAW>
__device__ __forceinline__ void mma_block(tile::FragC16x8& acc, const UnitA& A, int h, uint4 b) {
  const tile::FragA16x16 a0{{A.frag[h][0][0], A.frag[h][1][0], A.frag[h][0][1], A.frag[h][1][1]}};
  const tile::FragA16x16 a1{{A.frag[h][0][2], A.frag[h][1][2], A.frag[h][0][3], A.frag[h][1][3]}};
  if constexpr (RAW) {
    tile::FragC16x8 cb = {};
    tile::mma_16816<tile::f16>(cb, a0, tile::FragB16x8{{b.x, b.y}});
    tile::mma_16816<tile::f16>(cb, a1, tile::FragB16x8{{b.z, b.w}});
#pragma unroll
    for (int i = 0; i < 4; ++i) acc.r[i] = fmaf(A.d[h][i >> 1], cb.r[i], acc.r[i]);
  } else {
    tile::mma_16816<tile::f16>(acc, a0, tile::FragB16x8{{b.x, b.y}});
    tile::mma_16816<tile::f16>(acc, a1, tile::FragB16x8{{b.z, b.w}});
  }
}

}  // namespace tc::cuda::quant::mma_f16
