// Device pieces of the fused Q4 prefill GEMM (quant_prefill_fused.cu): the register-A form of
// wgmma (m64n128k16, f16 in, f32 out) and the decoders that turn packed Q4_0 / Q4_K bytes in
// shared memory straight into its A fragments.
//
// A fragment (hopper.md section 1: same pattern as the accumulator over 64 x 16): thread
// t = 32 w + l of the warpgroup holds four 32-bit registers of two halves each,
//   a[0] = (row g, k 2c, 2c + 1), a[1] = (row g + 8, k 2c, 2c + 1),
//   a[2] = (row g, k 2c + 8, 2c + 9), a[3] = (row g + 8, k 2c + 8, 2c + 9),
// with row relative to 16 w, g = l / 4, c = l % 4. In both formats a run of 16 consecutive k
// is one nibble of 16 consecutive bytes, so a thread's four k of a row are one nibble of
// bytes 2c, 2c + 1, 2c + 8, 2c + 9: two u16 loads and a byte permute give all four, for the
// low nibbles (one k16 step) and the high nibbles (another) at once.
// Nibble n becomes a half by the 0x6400 trick: the bits 0x6400 | n are the half 1024 + n.
#pragma once

#include <cuda_fp16.h>

#include "cuda/tile/wgmma.cuh"

namespace tc::cuda::quant {

// D(64 x 128, f32) += A(64 x 16, f16, registers, K-major) * B(16 x 128, f16, shared memory,
// K-major, 128B-swizzled descriptor); accumulate = 0 overwrites D. All 128 threads of the
// warpgroup execute it.
// clang-format off
__device__ __forceinline__ void wgmma_rs_m64n128k16(float (&d)[64], const uint32_t (&a)[4],
                                                    uint64_t db, uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
}
// clang-format on

// Bytes 2c, 2c + 1, 2c + 8, 2c + 9 from `p` (2-byte aligned) packed as [b0, b8, b1, b9], so that
// (word >> s) & 0x000F000F holds the nibble at bit s of bytes 2c and 2c + 1 (k 2c, 2c + 1) and
// (word >> (8 + s)) & 0x000F000F that of bytes 2c + 8, 2c + 9.
__device__ __forceinline__ uint32_t gather4(const uint8_t* p) {
  const uint32_t lo = *reinterpret_cast<const uint16_t*>(p);
  const uint32_t hi = *reinterpret_cast<const uint16_t*>(p + 8);
  return __byte_perm(lo, hi, 0x5140);
}

// Two nibbles as the half2 (1024 + n0, 1024 + n1). One LOP3 for the mask and the exponent
// bits: written as C, ptxas emitted an AND and an OR (two immediates), 16 extra instructions a
// k64 sub-step; the exponent pattern in a register lets the three-input form take both.
__device__ __forceinline__ __half2 nib2(uint32_t word, int shift) {
  uint32_t h;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;"  // (a & b) | c
      : "=r"(h)
      : "r"(word >> shift), "n"(0x000F000F), "r"(0x64006400u));
  return *reinterpret_cast<const __half2*>(&h);
}
__device__ __forceinline__ uint32_t bits(__half2 v) {
  return *reinterpret_cast<const uint32_t*>(&v);
}

// The packed bytes one thread needs from one Q4_0 block or one 16-byte Q4_K qs run, for its
// rows g and g + 8 (at p and p + 8 * stride): the gathered word and (Q4_0) the block scale.
// Loaded apart from the conversion so that the consumer can issue the shared-memory loads
// before it waits for the wgmma group whose registers the conversion overwrites.
struct Q4Raw {
  uint32_t w[2];
  __half d[2];
};
__device__ __forceinline__ Q4Raw load_q4_0(const uint8_t* block0, int stride, int c) {
  Q4Raw raw;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const uint8_t* b = block0 + r * 8 * stride;
    raw.d[r] = *reinterpret_cast<const __half*>(b);
    raw.w[r] = gather4(b + 2 + 2 * c);
  }
  return raw;
}
__device__ __forceinline__ Q4Raw load_q4_k(const uint8_t* q0, int stride, int c) {
  Q4Raw raw;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    raw.w[r] = gather4(q0 + r * 8 * stride + 2 * c);
    raw.d[r] = __ushort_as_half(0);
  }
  return raw;
}

// Sub-step s (64 k) of a stage, the thread's W row at `wrow` (rows `stride` bytes apart): two
// Q4_0 blocks (Q4K false) or the two 16-byte runs of a 32-byte Q4_K qs chunk. The fused
// prefill and the batched decode consumers issue these before their wgmma wait.
template <bool Q4K>
__device__ __forceinline__ void load_q4_substep(const uint8_t* wrow, int s, int stride, int c,
                                                Q4Raw (&raw)[2]) {
  if constexpr (Q4K) {
    raw[0] = load_q4_k(wrow + 32 * s, stride, c);
    raw[1] = load_q4_k(wrow + 32 * s + 16, stride, c);
  } else {
    raw[0] = load_q4_0(wrow + 18 * (2 * s), stride, c);
    raw[1] = load_q4_0(wrow + 18 * (2 * s + 1), stride, c);
  }
}

// Q4_K: a stage's f16 scales and negated mins of the thread's rows g and g + 8, for both
// sub-steps, from the scale slot the helper warps filled (32 bytes a row: per sub-step
// {s lo, s hi, -m lo, -m hi}; `row` points at row g's).
__device__ __forceinline__ void load_q4k_scale_slot(const uint8_t* row, __half2 (&sc)[2][2][2],
                                                    __half2 (&nm)[2][2][2]) {
  const uint4* sp = reinterpret_cast<const uint4*>(row);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const uint4 v = sp[16 * r + s];  // row + 8 r: 8 r rows of 32 bytes further
      sc[s][r][0] = *reinterpret_cast<const __half2*>(&v.x);
      sc[s][r][1] = *reinterpret_cast<const __half2*>(&v.y);
      nm[s][r][0] = *reinterpret_cast<const __half2*>(&v.z);
      nm[s][r][1] = *reinterpret_cast<const __half2*>(&v.w);
    }
  }
}

// Q4_0: the A fragments of a block's two k16 steps (low nibbles: k 0-15, high: 16-31).
// (q - 8) * d in half arithmetic: the subtraction is exact and the product rounds once, so
// the values equal the f32 dequantization rounded to f16.
__device__ __forceinline__ void q4_0_frags(const Q4Raw& raw, uint32_t (&lo)[4], uint32_t (&hi)[4]) {
  const __half2 bias = __float2half2_rn(1032.0f);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const __half2 d = __half2half2(raw.d[r]);
    const uint32_t w = raw.w[r];
    lo[r] = bits(__hmul2(__hsub2(nib2(w, 0), bias), d));
    lo[2 + r] = bits(__hmul2(__hsub2(nib2(w, 8), bias), d));
    hi[r] = bits(__hmul2(__hsub2(nib2(w, 4), bias), d));
    hi[2 + r] = bits(__hmul2(__hsub2(nib2(w, 12), bias), d));
  }
}

// Q4_K, one 16-byte run of a 32-byte qs chunk (k16 step u of its two sub-blocks): the
// fragments of the low-nibble sub-block (scale s[r][0], negated min m[r][0]) and the
// high-nibble one (s[r][1], m[r][1]). w = q * s - m in half arithmetic with s = f16(d sc),
// m = f16(dmin m): about one f16 rounding more than the f32 reference (the f16-temporaries
// bound allows it).
__device__ __forceinline__ void q4_k_frags(const Q4Raw& raw, const __half2 (&s)[2][2],
                                           const __half2 (&m)[2][2], uint32_t (&lo)[4],
                                           uint32_t (&hi)[4]) {
  const __half2 bias = __float2half2_rn(1024.0f);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const uint32_t w = raw.w[r];
    lo[r] = bits(__hfma2(__hsub2(nib2(w, 0), bias), s[r][0], m[r][0]));
    lo[2 + r] = bits(__hfma2(__hsub2(nib2(w, 8), bias), s[r][0], m[r][0]));
    hi[r] = bits(__hfma2(__hsub2(nib2(w, 4), bias), s[r][1], m[r][1]));
    hi[2 + r] = bits(__hfma2(__hsub2(nib2(w, 12), bias), s[r][1], m[r][1]));
  }
}

}  // namespace tc::cuda::quant
