// Q8_0 for the batched decode wgmma kernel (quant_mma_b32_kernel.cuh): the shared-memory loads
// and the A fragments of one 64-k sub-step (two 34-byte blocks: f16 d, then 32 int8 q).
//
// A stage of 128 k is 136 bytes of a row; TMA copies a 144-byte box from the 16-byte-aligned
// start at or before it (136 kg rounded down to 16: the stage begins 0 or 8 bytes into the
// box). In each k16 step u of a block a thread needs the bytes 16 u + {2c, 2c + 1} (its
// fragment registers a[0] / a[1]) and 16 u + {2c + 8, 2c + 9} (a[2] / a[3]) of rows g and
// g + 8: the same gather as Q4's (two u16 loads and a byte permute; quant_prefill_wgmma.cuh).
// Byte -> half: with the bytes of a pair at bits 0-7 and 16-23, (w & 0x00FF00FF) ^ 0x64806480
// is the half2 1024 + (q ^ 0x80) = 1152 + q (one LOP3), exact; 1152 subtracted (exact) and
// multiplied by d gives q d rounded once to f16: the f32 dequantization rounded to f16.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/quant_prefill_wgmma.cuh"

namespace tc::cuda::quant::b32 {

// One block's bytes for rows g and g + 8: the gathered words of its two k16 steps and d.
struct Q8Raw {
  uint32_t w[2][2];  // [row g / g + 8][k16 step]
  __half d[2];
};

// Block at `block` (its f16 d; 2-byte aligned), row g + 8 at block + 8 stride.
__device__ __forceinline__ Q8Raw load_q8_0(const uint8_t* block, int stride, int c) {
  Q8Raw raw;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const uint8_t* b = block + r * 8 * stride;
    raw.d[r] = *reinterpret_cast<const __half*>(b);
    raw.w[r][0] = gather4(b + 2 + 2 * c);
    raw.w[r][1] = gather4(b + 2 + 16 + 2 * c);
  }
  return raw;
}

// Sub-step s (64 k: blocks 2 s and 2 s + 1 of the stage) of the thread's row at `wrow`.
__device__ __forceinline__ void load_q8_substep(const uint8_t* wrow, int s, int stride, int c,
                                                Q8Raw (&raw)[2]) {
  raw[0] = load_q8_0(wrow + 34 * (2 * s), stride, c);
  raw[1] = load_q8_0(wrow + 34 * (2 * s + 1), stride, c);
}

// Bytes 0 and 2 of `w` (signed q) as the half2 (1152 + q0, 1152 + q2).
__device__ __forceinline__ __half2 byte2(uint32_t w) {
  uint32_t h;
  asm("lop3.b32 %0, %1, %2, %3, 0x6A;"  // (a & b) ^ c
      : "=r"(h)
      : "r"(w), "n"(0x00FF00FF), "r"(0x64806480u));
  return *reinterpret_cast<const __half2*>(&h);
}

// A block's fragments: k16 step 0 (k 0-15) into f0, step 1 (k 16-31) into f1.
__device__ __forceinline__ void q8_0_frags(const Q8Raw& raw, uint32_t (&f0)[4], uint32_t (&f1)[4]) {
  const __half2 bias = __float2half2_rn(1152.0f);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const __half2 d = __half2half2(raw.d[r]);
    // gather4's word is [2c, 2c + 8, 2c + 1, 2c + 9]: bytes 0 / 2 and 1 / 3 are the pairs.
    f0[r] = bits(__hmul2(__hsub2(byte2(raw.w[r][0]), bias), d));
    f0[2 + r] = bits(__hmul2(__hsub2(byte2(raw.w[r][0] >> 8), bias), d));
    f1[r] = bits(__hmul2(__hsub2(byte2(raw.w[r][1]), bias), d));
    f1[2 + r] = bits(__hmul2(__hsub2(byte2(raw.w[r][1] >> 8), bias), d));
  }
}

}  // namespace tc::cuda::quant::b32
