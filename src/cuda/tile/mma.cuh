// mma.sync (sm_80+) fragments and wrappers: m16n8k16 with f16/bf16 inputs, f32 accumulators.
// PTX ISA "Matrix Fragments for mma.m16n8k16". Lane l = 4 g + q (g = l / 4, q = l % 4):
//  A (16x16, row): a[0] = A[g][2q..2q+1],   a[1] = A[g+8][2q..],  a[2] = A[g][2q+8..],
//                  a[3] = A[g+8][2q+8..]    (two 16-bit values per 32-bit register)
//  B (16x8, col):  b[0] = B[2q..2q+1][g],   b[1] = B[2q+8..2q+9][g]
//  C (16x8, f32):  c[0..1] = C[g][2q..2q+1], c[2..3] = C[g+8][2q..2q+1]
// The fragment types carry their operand role so an A fragment cannot be passed as B.
#pragma once

#include "types.cuh"

namespace tc::tile {

struct FragA16x16 {
  u32 r[4];
};
struct FragB16x8 {
  u32 r[2];
};
struct FragC16x8 {
  float r[4];
};

template <class T>
__device__ __forceinline__ void mma_16816(FragC16x8& c, const FragA16x16& a, const FragB16x8& b);

template <>
__device__ __forceinline__ void mma_16816<bf16>(FragC16x8& c, const FragA16x16& a,
                                                const FragB16x8& b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c.r[0]), "+f"(c.r[1]), "+f"(c.r[2]), "+f"(c.r[3])
      : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
}
template <>
__device__ __forceinline__ void mma_16816<f16>(FragC16x8& c, const FragA16x16& a,
                                               const FragB16x8& b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c.r[0]), "+f"(c.r[1]), "+f"(c.r[2]), "+f"(c.r[3])
      : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
}

// ldmatrix: four 8x8 16-bit matrices from shared memory; lane i supplies row address i % 8 of
// matrix i / 8. Non-transposed: each lane receives the pair (row l/4, cols 2 (l%4) ..).
__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row)));
}
__device__ __forceinline__ void ldmatrix_x2(u32 (&r)[2], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr(smem_row)));
}

// 16-byte global load that bypasses L1 allocation (streamed operands read once).
__device__ __forceinline__ uint4 ld_stream_16(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

}  // namespace tc::tile
