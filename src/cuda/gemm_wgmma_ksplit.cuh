// In-cluster split-K of the sm_90a GEMM kernel (args.ksplit = S > 1, gemm_wgmma.cuh).
//
// Status: opt-in (TC_WGMMA_CLUSTER_SPLITK=1, TC_WGMMA_VARIANT=12..14). Correct and
// deterministic (tests/cuda/test_gemm_wgmma_odd.cpp), but slower than the unsplit persistent
// kernel on every shape measured (H200, 2026-11-29 22:12 UTC): 1000^3 153-158 against 188-190
// TFLOP/s, 127x4096^2 256 against 301-307, 8192x128x8192 418 against 439-449; at 4096^3 the
// 128 x 128 tile by 2 ran at the unsplit 128 x 128 rate (503). So the cost is per tile, about
// 4 us on 1000^3, and not yet explained (docs/gemm.md, round 7).
//
// Why: a problem with few tiles (1000^3 at 128 x 128 is 64 tiles for 132 SMs) leaves SMs idle,
// and the global split-K (partials in global memory, then a reduce kernel) cost more than it
// won there (H200 sweep: 1000^3 92 TFLOP/s at 2 splits against 159 unsplit). Here the S CTAs
// of a thread-block cluster (launched with cluster dims S x 1 x 1, one tile per cluster) each
// run a slice of K; ranks 1..S-1 then write their raw accumulators into rank 0's shared memory
// through DSMEM, and rank 0 adds them in rank order, ((d0 + d1) + d2) + d3, before its normal
// epilogue. No global partials, no second kernel, no atomics: results do not depend on timing.
//
// Where the partials go: rank 0's pipeline stages, which are idle once every CTA of the cluster
// has finished its main loop (the first cluster barrier). Slot s - 1 holds rank s's BM x BN
// tile of 4-byte accumulators, so (S - 1) * BM * BN * 4 bytes must fit in the stages (the
// planner checks). Each consumer thread writes its BN / 2 accumulators as 16-byte vectors at
// a 2 KB stride, so a warp's stores (and rank 0's loads of the same addresses) are 512
// contiguous bytes: no bank conflicts.
#pragma once

#include "cuda/gemm_wgmma_args.cuh"

namespace tc::cuda {

// 16-byte shared-memory vectors of accumulators, with "f" operands for f32: bit casts through
// integer registers made nvcc keep the accumulators in b32 registers across the main loop and
// copy them before every wgmma (ptxas C7514: serialized wgmmas).
__device__ __forceinline__ void st_cluster_v4(u32 addr, float a, float b, float c, float d) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(a), "f"(b),
               "f"(c), "f"(d)
               : "memory");
}
__device__ __forceinline__ void st_cluster_v4(u32 addr, i32 a, i32 b, i32 c, i32 d) {
  asm volatile("st.shared::cluster.v4.s32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(a), "r"(b),
               "r"(c), "r"(d)
               : "memory");
}
__device__ __forceinline__ void add_shared_v4(u32 addr, float& a, float& b, float& c, float& d) {
  float x, y, z, w;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(x), "=f"(y), "=f"(z), "=f"(w)
               : "r"(addr)
               : "memory");
  a += x;
  b += y;
  c += z;
  d += w;
}
__device__ __forceinline__ void add_shared_v4(u32 addr, i32& a, i32& b, i32& c, i32& d) {
  i32 x, y, z, w;
  asm volatile("ld.shared.v4.s32 {%0, %1, %2, %3}, [%4];"
               : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
               : "r"(addr)
               : "memory");
  a += x;
  b += y;
  c += z;
  d += w;
}

// Offset of this consumer thread's first vector in slot `slot` of the partial-sum area.
template <int BM, int BN>
__device__ __forceinline__ u32 ksplit_offset(int slot, int cw) {
  return u32(slot * (BM * BN * 4) + cw * (64 * BN * 4) + (threadIdx.x % 128) * 16);
}

// Ranks 1..S-1: this thread's accumulators into slot rank - 1 of cluster rank 0's stages.
template <int BM, int BN, class Acc>
__device__ __forceinline__ void ksplit_send(const Acc (&d)[BN / 2], u32 stages, int rank, int cw) {
  const u32 local = stages + ksplit_offset<BM, BN>(rank - 1, cw);
  u32 remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(remote) : "r"(local));
#pragma unroll
  for (int v = 0; v < BN / 8; ++v)
    st_cluster_v4(remote + v * 2048, d[4 * v], d[4 * v + 1], d[4 * v + 2], d[4 * v + 3]);
}

// Rank 0: adds ranks 1..S-1's partial sums to its own, in rank order.
template <int BM, int BN, class Acc>
__device__ __forceinline__ void ksplit_add(Acc (&d)[BN / 2], u32 stages, int ks, int cw) {
  for (int s = 1; s < ks; ++s) {
    const u32 local = stages + ksplit_offset<BM, BN>(s - 1, cw);
#pragma unroll
    for (int v = 0; v < BN / 8; ++v)
      add_shared_v4(local + v * 2048, d[4 * v], d[4 * v + 1], d[4 * v + 2], d[4 * v + 3]);
  }
}

}  // namespace tc::cuda
