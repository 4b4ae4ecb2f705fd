// The K-split fixup of the batched decode kernel (quant_mma_b32_kernel.cuh, finish): the last
// CTA of a W tile to arrive adds the splits' partial tiles ([splits][tiles][NX][kRows] f32 in
// the workspace, written by the other CTAs just before) in split order, ((p0 + p1) + p2) + ...,
// and writes Y's M x rows block. The forms differ only in how many loads a thread keeps in
// flight, so all give the same bits:
//  - kFixupWide (default): 4 items x 3 splits (splits <= 3) or 2 items x 8 splits a round, up
//    to 16 16-byte loads a thread in flight (4 x 4 spilled at the kernel's 96 registers). At
//    M = 32 (2048 16-byte items a tile, 640 threads at four warpgroups) that is one round of L2
//    latency for 2-3 splits and two for 4-8, where kFixupVec8 took four.
//  - kFixupVec8 (TC_QUANT_B32_FIXUP=vec8, the c79865c form): one item, 8 splits a round.
//  - kFixupElem (TC_QUANT_B32_FIXUP=elem): one element and its splits a round.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace tc::cuda::quant::b32 {

enum FixupForm : int { kFixupWide = 0, kFixupVec8 = 1, kFixupElem = 2 };

__device__ __forceinline__ void add_in_order(float4& a, const float4& v, bool first) {
  a.x = first ? v.x : a.x + v.x;
  a.y = first ? v.y : a.y + v.y;
  a.z = first ? v.z : a.z + v.z;
  a.w = first ? v.w : a.w + v.w;
}

// IT items (16 bytes of one X row each, C::kThreads apart) and SP splits of each a round.
// p0: split 0 of this tile; sstride: floats between splits; mm: X rows of Y (<= NX); rows: W
// rows of the tile inside N; n0: its first.
template <class C, int IT, int SP, class Params>
__device__ __forceinline__ void fixup_vec(const Params& P, const float* p0, size_t sstride, int mm,
                                          int rows, int n0) {
  const int items = mm * C::kRows / 4;
  for (int i0 = threadIdx.x; i0 < items; i0 += IT * C::kThreads) {
    float4 a[IT];
    for (int s0 = 0; s0 < P.splits; s0 += SP) {
      float4 v[IT][SP];
#pragma unroll
      for (int u = 0; u < IT; ++u)
#pragma unroll
        for (int j = 0; j < SP; ++j)
          if (i0 + u * C::kThreads < items && s0 + j < P.splits)
            v[u][j] = __ldcg(reinterpret_cast<const float4*>(p0 + (s0 + j) * sstride) + i0 +
                             u * C::kThreads);
#pragma unroll
      for (int u = 0; u < IT; ++u)
#pragma unroll
        for (int j = 0; j < SP; ++j)
          if (s0 + j < P.splits) add_in_order(a[u], v[u][j], s0 + j == 0);
    }
#pragma unroll
    for (int u = 0; u < IT; ++u) {
      const int i = i0 + u * C::kThreads;
      if (i >= items) break;
      const int m = 4 * i / C::kRows, n = 4 * i % C::kRows;
      float* yr = P.y + size_t(m) * P.N + n0 + n;
      const float av[4] = {a[u].x, a[u].y, a[u].z, a[u].w};
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (n + j < rows) yr[j] = av[j];
    }
  }
}

template <class C, class Params>
__device__ __forceinline__ void fixup_elem(const Params& P, const float* p0, size_t sstride, int mm,
                                           int rows, int n0) {
  for (int i = threadIdx.x; i < mm * C::kRows; i += C::kThreads) {
    const int m = i / C::kRows, n = i % C::kRows;
    if (n >= rows) continue;
    float v = __ldcg(p0 + i);
    for (int sp = 1; sp < P.splits; ++sp) v += __ldcg(p0 + sp * sstride + i);
    P.y[size_t(m) * P.N + n0 + n] = v;
  }
}

}  // namespace tc::cuda::quant::b32
