// The GEMV kernels' view of a weight group (gemv_quant*.cu): raw block bytes of one lane's unit
// of work, decoded four elements at a time into exact small integers.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/quant_dequant.cuh"

namespace tc::cuda::quant {

__device__ __forceinline__ float u2f_minus(uint32_t q, float bias) {
  return __int_as_float(0x4B000000 | q) - bias;  // exact: q < 2^23
}

// q4k_scale_min on the scales held in registers (bytes 0-3, 4-7, 8-11 of scales[12]):
// selects instead of a byte array, which would live in local memory.
__device__ __forceinline__ void q4k_scale_min_words(int j, uint32_t s0, uint32_t s1, uint32_t s2,
                                                    int* sc, int* m) {
  const int sh = 8 * (j & 3);
  if (j < 4) {
    *sc = (s0 >> sh) & 63;
    *m = (s1 >> sh) & 63;
  } else {
    const uint32_t q8 = (s2 >> sh) & 255, q0 = (s0 >> sh) & 255, q4 = (s1 >> sh) & 255;
    *sc = int((q8 & 0x0f) | ((q0 >> 6) << 4));
    *m = int((q8 >> 4) | ((q4 >> 6) << 4));
  }
}

// One lane's unit of work: H groups of 32 elements of one weight row. load() / load_plain()
// only issue loads (no arithmetic on the loaded values, so a prefetch inside a branch does not
// wait for them); prepare() then converts scales and packs words. slice(h, j4) gives elements
// 4*j4 .. 4*j4+3 of group h as exact small integers in f32, word(h, i) the same four as bytes
// for dp4a; scale(h) (and, for Q4_K, minv(h)) turn them into weights.
template <int FMT>
struct Unit;

template <>
struct Unit<kQ4_0> {  // one block: element e < 16 is the low nibble of qs[e], else high of qs[e-16]
  static constexpr int H = 1;
  uint16_t d16, q16[8];
  uint32_t q[4];  // after prepare(): qs bytes 4i .. 4i+3
  float d;
  __device__ void load(const uint8_t* row, int u) {
    const uint16_t* b = reinterpret_cast<const uint16_t*>(row + 18 * u);
    d16 = __ldg(b);
#pragma unroll
    for (int i = 0; i < 8; ++i) q16[i] = __ldg(b + 1 + i);
  }
  __device__ void load_plain(const uint8_t* blk) {  // shared memory (generic pointer)
    const uint16_t* b = reinterpret_cast<const uint16_t*>(blk);
    d16 = b[0];
#pragma unroll
    for (int i = 0; i < 8; ++i) q16[i] = b[1 + i];
  }
  __device__ void prepare() {
    d = __half2float(__ushort_as_half(d16));
#pragma unroll
    for (int i = 0; i < 4; ++i) q[i] = uint32_t(q16[2 * i]) | (uint32_t(q16[2 * i + 1]) << 16);
  }
  __device__ void slice(int, int j4, float* w) const {
    const uint32_t v = q[j4 & 3] >> (j4 < 4 ? 0 : 4);
#pragma unroll
    for (int e = 0; e < 4; ++e) w[e] = u2f_minus((v >> (8 * e)) & 15, 8388616.0f);
  }
  __device__ float scale(int) const {
    return d;
  }
  __device__ float minv(int) const {
    return 0.0f;
  }
  __device__ uint32_t word(int, int i) const {  // four nibbles as bytes (0..15)
    return (q[i & 3] >> (i < 4 ? 0 : 4)) & 0x0F0F0F0Fu;
  }
};

template <>
struct Unit<kQ8_0> {  // one block of 32 int8
  static constexpr int H = 1;
  uint16_t d16, q16[16];
  uint32_t q[8];  // after prepare(): qs bytes 4i .. 4i+3
  float d;
  __device__ void load(const uint8_t* row, int u) {
    const uint16_t* b = reinterpret_cast<const uint16_t*>(row + 34 * u);
    d16 = __ldg(b);
#pragma unroll
    for (int i = 0; i < 16; ++i) q16[i] = __ldg(b + 1 + i);
  }
  __device__ void load_plain(const uint8_t* blk) {  // shared memory (generic pointer)
    const uint16_t* b = reinterpret_cast<const uint16_t*>(blk);
    d16 = b[0];
#pragma unroll
    for (int i = 0; i < 16; ++i) q16[i] = b[1 + i];
  }
  __device__ void prepare() {
    d = __half2float(__ushort_as_half(d16));
#pragma unroll
    for (int i = 0; i < 8; ++i) q[i] = uint32_t(q16[2 * i]) | (uint32_t(q16[2 * i + 1]) << 16);
  }
  __device__ void slice(int, int j4, float* w) const {
    const uint32_t v = q[j4] ^ 0x80808080u;  // q + 128 per byte
#pragma unroll
    for (int e = 0; e < 4; ++e) w[e] = u2f_minus((v >> (8 * e)) & 255, 8388736.0f);
  }
  __device__ float scale(int) const {
    return d;
  }
  __device__ float minv(int) const {
    return 0.0f;
  }
  __device__ uint32_t word(int, int i) const {
    return q[i];
  }  // four int8
};

template <>
struct Unit<kQ4_K> {  // chunk c of a super-block: sub-blocks 2c (low nibbles), 2c+1 (high)
  static constexpr int H = 2;
  uint4 head, lo, hi;
  int c;
  float d1[2], m1[2];  // after prepare()
  __device__ void load(const uint8_t* row, int u) {
    const uint4* b = reinterpret_cast<const uint4*>(row + 144 * (u / 4));
    c = u % 4;
    head = __ldg(b);
    lo = __ldg(b + 1 + 2 * c);
    hi = __ldg(b + 2 + 2 * c);
  }
  __device__ void prepare() {
    const float d = __half2float(__ushort_as_half(uint16_t(head.x & 0xffff)));
    const float dmin = __half2float(__ushort_as_half(uint16_t(head.x >> 16)));
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int sc, mn;
      q4k_scale_min_words(2 * c + h, head.y, head.z, head.w, &sc, &mn);
      d1[h] = d * float(sc);
      m1[h] = dmin * float(mn);
    }
  }
  __device__ uint32_t raw_word(int i) const {
    return i == 0   ? lo.x
           : i == 1 ? lo.y
           : i == 2 ? lo.z
           : i == 3 ? lo.w
           : i == 4 ? hi.x
           : i == 5 ? hi.y
           : i == 6 ? hi.z
                    : hi.w;
  }
  __device__ void slice(int h, int j4, float* w) const {
    const uint32_t v = raw_word(j4) >> (4 * h);
#pragma unroll
    for (int e = 0; e < 4; ++e) w[e] = u2f_minus((v >> (8 * e)) & 15, 8388608.0f);
  }
  __device__ float scale(int h) const {
    return d1[h];
  }
  __device__ float minv(int h) const {
    return m1[h];
  }
  __device__ uint32_t word(int h, int i) const {  // elements 4i .. 4i+3 of sub-block 2c + h
    return (raw_word(i) >> (4 * h)) & 0x0F0F0F0Fu;
  }
};

}  // namespace tc::cuda::quant
