// Host-side entry points of the sm_90a wgmma GEMM kernels, used by the planner (gemm_wgmma.cu)
// and the helper kernels (gemm_pack.cu). The kernel templates are instantiated only in the
// per-transpose instance files (gemm_wgmma_{bf16,f16}_{nn,nt,tn,tt}.cu, gemm_wgmma_s8.cu), each
// its own translation unit so that a parallel build compiles them side by side.
#pragma once

#include <cuda_runtime.h>

#include "cuda/gemm_wgmma_args.cuh"

namespace tc::cuda {

// The three tensor maps of one launch: A, B, and C (valid only when args.tma_store).
struct WgmmaMaps {
  TmaMap a, b, c;
};

// Launches gemm_wgmma_kernel<T, TA, TB, bm, bn, stages, cluster> for a tile the planner chose:
// (128, 256), (128, 128), for 16-bit T also (64, 128), (64, 64), and (128, 256) in CTA pairs
// (cluster 2). Defined in gemm_wgmma_instance.cuh, instantiated by the instance files.
template <class T, int TA, int TB>
cudaError_t launch_wgmma_tiles(int bm, int bn, int cluster, const WgmmaMaps& maps,
                               const WgmmaArgs& args, int grid, cudaStream_t stream);
// int8 is an explicit specialization (gemm_wgmma_s8.cu: it routes 128 x 128 tiles to the
// ping-pong kernel); declared here so that no includer instantiates the generic definition.
template <>
cudaError_t launch_wgmma_tiles<tile::i8, 0, 0>(int bm, int bn, int cluster, const WgmmaMaps& maps,
                                               const WgmmaArgs& args, int grid,
                                               cudaStream_t stream);

// Pipeline depth per tile: as many stages as fit beside the epilogue buffers (WgmmaSmem):
// 48 KB x 4 at 128 x 256, 32 KB x 6 at 128 x 128, 24 KB x 8 at 64 x 128, 16 KB x 12 at 64 x 64.
constexpr int wgmma_stages(int bm, int bn) {
  return bm == 128 ? (bn == 256 ? 4 : 6) : (bn == 128 ? 8 : 12);
}

// gemm_pack.cu: copies a batch of rows x cols matrices (element (r, c) at
// src + b * src_batch + r * sr + c * sc, element size esz) into dst, dense with row pitch
// `ld` elements (ld >= cols, ld * esz a multiple of 16) and batch pitch rows * ld.
cudaError_t launch_pack(const void* src, void* dst, int esz, int batch, long long src_batch,
                        int rows, int cols, long long sr, long long sc, long long ld,
                        cudaStream_t stream);

// gemm_pack.cu: C = alpha * sum_s partial[b][s] + beta * C in split order (deterministic).
cudaError_t launch_splitk_reduce(const WgmmaArgs& args, cudaStream_t stream);

}  // namespace tc::cuda
