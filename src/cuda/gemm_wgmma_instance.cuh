// Definition of launch_wgmma_tiles (declared in gemm_wgmma_launch.cuh). Included only by the
// instance files, each of which instantiates it for one (type, transposes).
#pragma once

#include <atomic>

#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemm_wgmma.cuh"
#include "cuda/gemm_wgmma_launch.cuh"

namespace tc::cuda {

template <class T, int TA, int TB, int BM, int BN, int CL>
cudaError_t launch_wgmma_instance(const WgmmaMaps& maps, const WgmmaArgs& args, int grid,
                                  cudaStream_t stream) {
  constexpr int ST = wgmma_stages(BM, BN);
  auto kernel = gemm_wgmma_kernel<T, TA, TB, BM, BN, ST, CL>;
  const int smem = WgmmaSmem<BM, BN, ST>::total;
  const dim3 block(128 * (1 + BM / 64));
  // The shared-memory opt-in is per device and per kernel; raise it once (a driver call per
  // launch costs microseconds of host time, which small problems feel). Pairs: the grid must
  // not exceed the co-resident clusters, or a persistent pair would wait for a whole tile.
  static std::atomic<unsigned long long> raised{0};
  static std::atomic<int> max_pairs{0};
  int dev = 0;
  cudaError_t e = cudaSuccess;
  // Raised on every device already: no cudaGetDevice (gemm_launch_pdl.h, every_device).
  const bool all_raised = every_device(raised.load(std::memory_order_acquire));
  if (!all_raised && (e = cudaGetDevice(&dev)) != cudaSuccess) return e;
  const unsigned long long bit = 1ull << (dev & 63);
  if (!all_raised && !(raised.load(std::memory_order_acquire) & bit)) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    if constexpr (CL > 1) {
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = dim3(2 * CL);
      cfg.blockDim = block;
      cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = CL;
      attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
      int n = 0;
      e = cudaOccupancyMaxActiveClusters(&n, kernel, &cfg);
      if (e != cudaSuccess) return e;
      max_pairs.store(n, std::memory_order_release);  // same on every device of one kind
    }
    raised.fetch_or(bit, std::memory_order_acq_rel);
  }
  if constexpr (CL > 1) {
    const int pairs = max_pairs.load(std::memory_order_acquire);
    grid = (grid / CL) * CL;
    if (pairs > 0 && grid > pairs * CL) grid = pairs * CL;
    if (grid < CL) grid = CL;
  }
  // In-cluster split-K runs the CL = 1 kernel in clusters of args.ksplit CTAs (one tile each).
  const int cluster = CL > 1 ? CL : (args.ksplit > 1 ? args.ksplit : 1);
  return launch_maybe_pdl(kernel, dim3(grid), block, smem, stream, cluster, maps.a, maps.b, maps.c,
                          args);
}

template <class T, int TA, int TB>
cudaError_t launch_wgmma_tiles(int bm, int bn, int cluster, const WgmmaMaps& maps,
                               const WgmmaArgs& args, int grid, cudaStream_t stream) {
  if constexpr (sizeof(T) == 2) {  // wgmma s8 is only built at BM = 128
    if (bm == 64)
      return bn == 64 ? launch_wgmma_instance<T, TA, TB, 64, 64, 1>(maps, args, grid, stream)
                      : launch_wgmma_instance<T, TA, TB, 64, 128, 1>(maps, args, grid, stream);
  }
  if (cluster == 2)  // B multicast over CTA pairs: built for the 128 x 256 tile
    return launch_wgmma_instance<T, TA, TB, 128, 256, 2>(maps, args, grid, stream);
  return bn == 256 ? launch_wgmma_instance<T, TA, TB, 128, 256, 1>(maps, args, grid, stream)
                   : launch_wgmma_instance<T, TA, TB, 128, 128, 1>(maps, args, grid, stream);
}

}  // namespace tc::cuda
