// Launches one instance of gemm_wgmma_kernel (host side, included by the per-dtype instance
// files gemm_wgmma_{bf16,f16,s8}.cu so that each compiles in its own translation unit).
#pragma once

#include <cuda_runtime.h>

#include <atomic>

#include "cuda/gemm_wgmma.cuh"

namespace tc::cuda {

// Stages per tile width: 48 KB per stage at BN = 256 (4 stages = 192 KB), 32 KB at BN = 128
// (6 stages); both leave room under the 227 KB opt-in limit.
template <int BN>
constexpr int wgmma_stages() {
  return BN == 256 ? 4 : 6;
}

template <class T, int TA, int TB, int BN>
cudaError_t launch_wgmma_instance(const TmaMap& ma, const TmaMap& mb, const WgmmaArgs& args,
                                  int grid, cudaStream_t stream) {
  constexpr int ST = wgmma_stages<BN>();
  auto kernel = gemm_wgmma_kernel<T, TA, TB, BN, ST>;
  const int smem = WgmmaSmem<BN, ST>::total;
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
  kernel<<<grid, 384, smem, stream>>>(ma, mb, args);
  return cudaGetLastError();
}

// One entry per element type; ta/tb/bn are validated by the planner (gemm_wgmma.cu).
cudaError_t launch_wgmma_bf16(int ta, int tb, int bn, const TmaMap& ma, const TmaMap& mb,
                              const WgmmaArgs& args, int grid, cudaStream_t stream);
cudaError_t launch_wgmma_f16(int ta, int tb, int bn, const TmaMap& ma, const TmaMap& mb,
                             const WgmmaArgs& args, int grid, cudaStream_t stream);
cudaError_t launch_wgmma_s8(int bn, const TmaMap& ma, const TmaMap& mb, const WgmmaArgs& args,
                            int grid, cudaStream_t stream);

// gemm_pack.cu: copies a batch of rows x cols matrices (element (r, c) at
// src + b * src_batch + r * sr + c * sc, element size esz) into dst, dense with row pitch
// `ld` elements (ld >= cols, ld * esz a multiple of 16) and batch pitch rows * ld.
cudaError_t launch_pack(const void* src, void* dst, int esz, int batch, long long src_batch,
                        int rows, int cols, long long sr, long long sc, long long ld,
                        cudaStream_t stream);

// gemm_pack.cu: C = alpha * sum_s partial[b][s] + beta * C in split order (deterministic).
cudaError_t launch_splitk_reduce(const WgmmaArgs& args, cudaStream_t stream);

}  // namespace tc::cuda
