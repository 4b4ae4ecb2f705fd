// Host helpers for cudaLaunchKernelEx: raise_smem_once (the shared-memory opt-in), launch_ex
// (clusters and programmatic dependent launch, tile/grid_dep.cuh, as the caller asks; the quantized
// kernels pass their Args::pdl) and launch_maybe_pdl (PDL when the device supports it, sm_90+, and
// TC_GEMM_PDL is not "0"; the GEMM kernels). A kernel launched with PDL must call grid_dep_wait()
// before it touches memory the previous kernel writes.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/knobs.h"

namespace tc::cuda {

// One bit per device of the process (CUDA_VISIBLE_DEVICES is read once, at CUDA's start), 0
// when the count is unknown. The once-per-device state below is complete when it covers this
// mask, and then a launch needs no cudaGetDevice to look its device's bit up.
inline unsigned long long all_devices_mask() {
  static const unsigned long long mask = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
      (void)cudaGetLastError();
      return 0ull;
    }
    return n >= 64 ? ~0ull : (1ull << n) - 1;
  }();
  return mask;
}
// Whether `bits` (a once-per-device record) covers every device.
inline bool every_device(unsigned long long bits) {
  const unsigned long long all = all_devices_mask();
  return all != 0 && (bits & all) == all;
}

inline bool pdl_enabled() {
  if (knobs::is(knobs::kGemmPdl, "0")) return false;  // per launch: the lab A/Bs it in one run
  static std::atomic<unsigned long long> known{0}, capable{0};  // bit per device
  if (every_device(known.load(std::memory_order_acquire))) {
    const unsigned long long c = capable.load(std::memory_order_acquire) & all_devices_mask();
    if (c == all_devices_mask()) return true;
    if (c == 0) return false;
  }
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  const unsigned long long bit = 1ull << (dev & 63);
  if (!(known.load(std::memory_order_acquire) & bit)) {
    int major = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (major >= 9) capable.fetch_or(bit, std::memory_order_acq_rel);
    known.fetch_or(bit, std::memory_order_acq_rel);
  }
  return capable.load(std::memory_order_acquire) & bit;
}

// Raises Kernel's dynamic shared-memory opt-in to `smem` bytes, once per device: a driver call
// per launch costs microseconds of host time, which small problems feel. The bits outlive a
// cudaDeviceReset() (which drops the opt-in with the primary context): resetting a device under
// live tc contexts is not supported, and a launch after one fails with cudaErrorInvalidValue,
// reported as the launch's error, not a crash (review, 2026-11-30).
template <auto Kernel>
cudaError_t raise_smem_once(int smem) {
  static std::atomic<unsigned long long> raised{0};  // bit per device
  if (every_device(raised.load(std::memory_order_acquire))) return cudaSuccess;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = 1ull << (dev & 63);
  if (raised.load(std::memory_order_acquire) & bit) return cudaSuccess;
  e = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e == cudaSuccess) raised.fetch_or(bit, std::memory_order_acq_rel);
  return e;
}

// Launches `kernel` with cudaLaunchKernelEx: cluster > 1 makes (cluster, 1, 1) thread-block
// clusters (grid.x must be a multiple of it); pdl adds programmatic stream serialization.
template <class... Params, class... Args>
cudaError_t launch_ex(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                      cudaStream_t stream, int cluster, bool pdl, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (cluster > 1) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = unsigned(cluster);
    attr[n].val.clusterDim.y = 1;
    attr[n].val.clusterDim.z = 1;
    ++n;
  }
  if (pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  cfg.attrs = attr;
  cfg.numAttrs = n;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

// launch_ex with PDL where pdl_enabled() says so (the GEMM kernels).
template <class... Params, class... Args>
cudaError_t launch_maybe_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                             cudaStream_t stream, int cluster, Args&&... args) {
  return launch_ex(kernel, grid, block, smem, stream, cluster, pdl_enabled(),
                   std::forward<Args>(args)...);
}

}  // namespace tc::cuda
