// The weight stream of the bulk quantized kernels (gemv_quant_bulk.cu, quant_mma_bulk.cu):
// 1-D bulk copies (cp.async.bulk, the TMA's linear mode) of whole weight rows into a ring of
// shared-memory stages, each completed on an mbarrier (PTX ISA "cp.async.bulk",
// "mbarrier"). One producer lane issues the copies; consumer warps wait on a stage's `full`
// barrier, decode from shared memory and arrive on its `empty` barrier, which the producer
// waits on before it reuses the slot. Rows are copied whole, so a stage of R consecutive rows
// is one contiguous range when the row bytes are a multiple of 16 (the copy's granule): K %
// 256 == 0 for Q4_0 / Q8_0 (18- and 34-byte blocks), any K for Q4_K (144-byte blocks).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace tc::cuda::quant::bulk {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}

// Makes the inits visible to the async proxy (the bulk copies) before the first copy.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void bar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

// Arrives and announces `bytes` of copy traffic that must land before the phase completes.
__device__ __forceinline__ void bar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
}

// Blocks until the phase with parity `parity` has completed (a fresh barrier is in phase 0).
__device__ __forceinline__ void bar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred P;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n"
      "@!P bra WAIT_%=;\n"
      "}\n" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
}

// `bytes` (a multiple of 16; dst and src 16-byte aligned) from global to shared memory,
// completing that many bytes of transaction count on `bar`.
__device__ __forceinline__ void copy(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_u32(dst)),
      "l"(src), "r"(bytes), "r"(smem_u32(bar))
      : "memory");
}

// Programmatic dependent launch (sm_90): wait for the previous grid's completion and memory;
// let the next PDL grid be scheduled. No-ops when the launch had no PDL attribute.
__device__ __forceinline__ void grid_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Named barrier over the first `count` threads (the consumer warps), id 1..15.
__device__ __forceinline__ void sync_consumers(uint32_t count) {
  asm volatile("bar.sync 1, %0;" ::"r"(count) : "memory");
}

}  // namespace tc::cuda::quant::bulk
