// The batched decode kernel's X conversion kernel (quant_mma_b32.cu; where the helper warps do not
// convert X and X is not f16, or with TC_QUANT_B32_CONVERT=always): X [M][K] f32, f16 or bf16 (xk,
// XKind) -> f16 into the workspace (8 values a chunk, round to nearest, b32::x_chunk_f16: half X
// widened to f32 first, the f32 path's bits), after the previous grid (which may write X) has
// ended.
//
// Two forms:
//  - convert_x_kernel (the default): one chunk a thread, 256-thread CTAs.
//  - convert_x_resident_kernel (TC_QUANT_B32_CONVERT=resident, A/B): 128 threads, at most 32
//    registers (4096: beside a b32 CTA's 640 x 96 = 61440 of an SM's 65536), at most one CTA
//    per SM, 2 chunks a thread and round, so that the conversion grid could sit beside the
//    running b32 grid and the next b32 grid's CTAs take SMs as soon as they drain. Measured
//    slower (H200 2026-11-30 00:27 UTC, same run): 7B step at batch 32 Q4_0 2.868-2.882 ms
//    against 2.821 with the default, Q4_K 3.351-3.360 against 3.323, Q8_0 3.560-3.574 against
//    3.425; rotated 4096x11008 Q8_0 M = 32 29.0 against 27.4 us (two rounds of loads a
//    thread at K = 11008 on 132 CTAs, where the default's 172 CTAs do one).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/quant_mma_b32_helpers.cuh"
#include "cuda/tile/grid_dep.cuh"

namespace tc::cuda::quant::b32 {

constexpr int kConvThreads = 128, kConvUnroll = 2;

// One chunk a thread.
__global__ void __launch_bounds__(256)
    convert_x_kernel(const void* x, int xk, uint32_t total8, uint4* out) {
  tc::tile::grid_dep_launch_dependents();
  tc::tile::grid_dep_wait();
  const uint32_t i = blockIdx.x * 256 + threadIdx.x;
  if (i < total8) {
    uint4 r[2];
    x_chunk_load(x, xk, size_t(i) * 8, r);
    out[i] = x_chunk_f16(r, xk);
  }
}

// kConvUnroll chunks a thread and round (loads first), grid-stride; <= 32 registers.
__global__ void __launch_bounds__(kConvThreads, 65536 / (kConvThreads * 32))
    convert_x_resident_kernel(const void* x, int xk, uint32_t total8, uint4* out) {
  tc::tile::grid_dep_launch_dependents();
  tc::tile::grid_dep_wait();
  const uint32_t stride = gridDim.x * kConvThreads;
  for (uint32_t i0 = blockIdx.x * kConvThreads + threadIdx.x; i0 < total8;
       i0 += kConvUnroll * stride) {
    uint4 v[kConvUnroll][2];
#pragma unroll
    for (int u = 0; u < kConvUnroll; ++u) {
      const uint32_t i = i0 + u * stride;
      if (i < total8) x_chunk_load(x, xk, size_t(i) * 8, v[u]);
    }
#pragma unroll
    for (int u = 0; u < kConvUnroll; ++u) {
      const uint32_t i = i0 + u * stride;
      if (i < total8) out[i] = x_chunk_f16(v[u], xk);
    }
  }
}

}  // namespace tc::cuda::quant::b32
