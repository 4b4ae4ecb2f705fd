// The K split of the batched decode kernel inside a thread-block cluster
// (quant_mma_b32_kernel.cuh; by default where the split's CTAs fit in one wave of
// clusters: quant_mma_b32.cu). The S CTAs of a W tile form one cluster (grid S x tiles,
// cluster S x 1 x 1, S <= 8, rank = split): each writes its partial tile into its own shared
// memory (the ring is idle by then), and after a cluster barrier rank r adds slice r of the
// tile over the S ranks' shared memory (DSMEM), in split order ((p0 + p1) + p2) + ..., as the
// global fixup does (the same bits), and writes Y. A second barrier keeps every rank's shared
// memory alive until the others have read it.
// What it replaces (quant_mma_b32_fixup.cuh): per CTA a 32 KB partial written to the L2 and a
// fence, an atomic ticket, and in the last CTA of a tile the loads of every split's partial
// (256 KB at M = 32 and 8 splits, on one SM); here each rank reads 1/S of the tile from the S
// ranks. PTX ISA: mapa, ld.shared::cluster, barrier.cluster.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/gemv_quant_bulk_trace.cuh"
#include "cuda/quant_mma_b32_fixup.cuh"
#include "cuda/tile/mbarrier.cuh"

namespace tc::cuda::quant::b32 {

constexpr int kMaxClusterSplits = 8;  // the portable cluster size

__device__ __forceinline__ float4 ld_cluster_v4(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

__device__ __forceinline__ uint32_t cluster_addr(uint32_t local, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

// Every thread of the CTA calls it after its main loop (consumers with their accumulators d).
// smem: this CTA's ring (>= NX x (kRows + 4) floats); tile: the W tile, P.splits the ranks.
template <class C, class Params>
__device__ __forceinline__ void finish_cluster(const Params& P, const float (&d)[C::NX / 2],
                                               bool consumer, uint8_t* smem, int tile) {
  // Floats between X rows of the partial: + 4 shifts each of a warp's 4 X rows by 8 banks, so
  // that the accumulator stores do not conflict; rows stay 16-byte aligned for the reads.
  constexpr int kPitch = C::kRows + 4;
  static_assert(size_t(C::NX) * kPitch * 4 <= C::kRingBytes, "the partial tile fits in the ring");
  float* red = reinterpret_cast<float*>(smem);
  const int t = threadIdx.x % 128, cw = threadIdx.x / 128 - 1;
  const int rr = 64 * cw + 16 * (t / 32) + (t % 32) / 4, mb = 2 * (t % 4);
  __syncthreads();  // every warpgroup's wgmmas have read their last B: the ring is free
  if (consumer) {
#pragma unroll
    for (int r = 0; r < C::NX / 2; ++r)
      red[(mb + 8 * (r >> 2) + (r & 1)) * kPitch + rr + 8 * ((r >> 1) & 1)] = d[r];
  }
  __syncwarp();
  tc::tile::cluster_sync();         // every rank's partial is in its shared memory
  if (P.trace && threadIdx.x == 0)  // trace word 3: the cluster's partials are all written
    P.trace[size_t(blockIdx.y * gridDim.x + blockIdx.x) * 8 + 3] = bulk_trace::now_ns();
  const int n0 = tile * C::kRows, rows = min(C::kRows, P.N - n0), mm = min(P.M, C::NX);
  const int items = mm * C::kRows / 4, share = (items + P.splits - 1) / P.splits;
  const int lo = int(tc::tile::cluster_ctarank()) * share, hi = min(items, lo + share);
  const uint32_t base = tc::tile::smem_addr(red);
  for (int i = lo + threadIdx.x; i < hi; i += C::kThreads) {
    const int m = 4 * i / C::kRows, n = 4 * i % C::kRows;
    const uint32_t at = base + uint32_t(m * kPitch + n) * 4;
    float4 v[kMaxClusterSplits], a = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s)
      if (s < P.splits) v[s] = ld_cluster_v4(cluster_addr(at, uint32_t(s)));
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s)
      if (s < P.splits) add_in_order(a, v[s], s == 0);
    float* yr = P.y + size_t(m) * P.N + n0 + n;
    const float av[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (n + j < rows) yr[j] = av[j];
  }
  // No rank leaves while another reads its partial. Relaxed: the remote loads above are
  // complete (their sums were stored), and Y's stores need no ordering against the peers.
  __syncwarp();
  tc::tile::cluster_sync_relaxed();
}

}  // namespace tc::cuda::quant::b32
