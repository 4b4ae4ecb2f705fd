// Definition of launch_wgmma_tiles (declared in gemm_wgmma_launch.cuh). Included only by the
// instance files, each of which instantiates it for one (type, transposes).
#pragma once

#include <atomic>

#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemm_wgmma.cuh"
#include "cuda/gemm_wgmma_launch.cuh"

namespace tc::cuda {

template <class T, int TA, int TB, int BM, int BN>
cudaError_t launch_wgmma_instance(const WgmmaMaps& maps, const WgmmaArgs& args, int grid,
                                  cudaStream_t stream) {
  constexpr int ST = wgmma_stages(BM, BN);
  auto kernel = gemm_wgmma_kernel<T, TA, TB, BM, BN, ST>;
  const int smem = WgmmaSmem<BM, BN, ST>::total;
  // The shared-memory opt-in is per device and per kernel; raise it once (a driver call per
  // launch costs microseconds of host time, which small problems feel).
  static std::atomic<unsigned long long> raised{0};
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = 1ull << (dev & 63);
  if (!(raised.load(std::memory_order_acquire) & bit)) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    raised.fetch_or(bit, std::memory_order_acq_rel);
  }
  return launch_maybe_pdl(kernel, dim3(grid), dim3(128 * (1 + BM / 64)), smem, stream, maps.a,
                          maps.b, maps.c, args);
}

template <class T, int TA, int TB>
cudaError_t launch_wgmma_tiles(int bm, int bn, const WgmmaMaps& maps, const WgmmaArgs& args,
                               int grid, cudaStream_t stream) {
  if constexpr (sizeof(T) == 2) {  // wgmma s8 is only built at BM = 128
    if (bm == 64)
      return bn == 64 ? launch_wgmma_instance<T, TA, TB, 64, 64>(maps, args, grid, stream)
                      : launch_wgmma_instance<T, TA, TB, 64, 128>(maps, args, grid, stream);
  }
  return bn == 256 ? launch_wgmma_instance<T, TA, TB, 128, 256>(maps, args, grid, stream)
                   : launch_wgmma_instance<T, TA, TB, 128, 128>(maps, args, grid, stream);
}

}  // namespace tc::cuda
