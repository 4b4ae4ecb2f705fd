// The batched decode kernel's X conversion kernel (quant_mma_b32.cu; where the helper warps do
// not convert X): X [M][K] f32 -> f16 into the workspace (8 values a chunk, round to nearest,
// b32::x_chunk_f16), after the previous grid (which may write X) has ended.
//
// Residency: the b32 kernel holds 640 threads x 96 registers (61440 of an SM's 65536) and most
// of its shared memory, so a conversion CTA of 256 threads (6144 registers) cannot sit on an SM
// beside one; it waits for an SM to drain, and the next b32 grid (its PDL dependent) can only
// start once every conversion CTA has started. The default form (128 threads, at most 32
// registers: 4096, one CTA per SM, at most one per SM in the grid) fits beside a running b32
// CTA: the conversion grid is resident while the previous b32 grid still runs, so the next b32
// grid's CTAs can take SMs (and copy their first ring of W) as soon as they drain.
// TC_QUANT_B32_CONVERT=256: the c79865c form (one chunk a thread, 256-thread CTAs), A/B.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/quant_mma_b32_helpers.cuh"
#include "cuda/tile/grid_dep.cuh"

namespace tc::cuda::quant::b32 {

constexpr int kConvThreads = 128, kConvUnroll = 2;

// One chunk a thread.
__global__ void __launch_bounds__(256)
    convert_x_kernel(const float4* x, uint32_t total8, uint4* out, bool hi16) {
  tc::tile::grid_dep_launch_dependents();
  tc::tile::grid_dep_wait();
  const uint32_t i = blockIdx.x * 256 + threadIdx.x;
  if (i < total8) out[i] = x_chunk_f16(x[2 * i], x[2 * i + 1], i, hi16);
}

// kConvUnroll chunks a thread and round (loads first), grid-stride; <= 32 registers.
__global__ void __launch_bounds__(kConvThreads, 65536 / (kConvThreads * 32))
    convert_x_resident_kernel(const float4* x, uint32_t total8, uint4* out, bool hi16) {
  tc::tile::grid_dep_launch_dependents();
  tc::tile::grid_dep_wait();
  const uint32_t stride = gridDim.x * kConvThreads;
  for (uint32_t i0 = blockIdx.x * kConvThreads + threadIdx.x; i0 < total8;
       i0 += kConvUnroll * stride) {
    float4 v[kConvUnroll][2];
#pragma unroll
    for (int u = 0; u < kConvUnroll; ++u) {
      const uint32_t i = i0 + u * stride;
      if (i < total8) {
        v[u][0] = x[2 * i];
        v[u][1] = x[2 * i + 1];
      }
    }
#pragma unroll
    for (int u = 0; u < kConvUnroll; ++u) {
      const uint32_t i = i0 + u * stride;
      if (i < total8) out[i] = x_chunk_f16(v[u][0], v[u][1], i, hi16);
    }
  }
}

}  // namespace tc::cuda::quant::b32
