// mbarrier: the 8-byte shared-memory barrier that TMA completes (complete_tx) and that
// producer/consumer warps wait on by phase parity. PTX ISA "Parallel Synchronization and
// Communication Instructions: mbarrier"; hopper.md section 4.
#pragma once

#include "types.cuh"

namespace tc::tile {

struct alignas(8) mbarrier {
  u64 state;
};

__device__ __forceinline__ void mbar_init(mbarrier* bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}

// Makes mbarrier.init visible to the async proxy (TMA) and to other threads after a barrier.
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive(mbarrier* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// Arrives and announces `bytes` of TMA traffic that must land before the phase completes.
__device__ __forceinline__ void mbar_arrive_expect_tx(mbarrier* bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// Blocks until the phase with parity `phase` has completed. A fresh barrier counts as having
// completed parity 1, so producers start their empty-slot waits at parity 1.
__device__ __forceinline__ void mbar_wait(mbarrier* bar, u32 phase) {
  asm volatile(
      "{\n"
      ".reg .pred P;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n"
      "@!P bra WAIT_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(phase)
      : "memory");
}

// Orders this thread's generic-proxy shared-memory writes before later async-proxy (TMA,
// wgmma) accesses.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// --- clusters (hopper.md section 4) ---------------------------------------------------------
__device__ __forceinline__ u32 cluster_ctarank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Arrives on the barrier at the same shared-memory offset in cluster CTA `cta`. Default
// semantics (release, CTA scope), as CUTLASS's ClusterBarrier::arrive: `.release.cluster`
// compiled to a MEMBAR.ALL.GPU per call, and the consumer's wgmma reads are already complete.
__device__ __forceinline__ void mbar_arrive_cluster(mbarrier* bar, u32 cta) {
  asm volatile(
      "{\n.reg .b32 ra;\n"
      "mapa.shared::cluster.u32 ra, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(smem_addr(bar)),
      "r"(cta)
      : "memory");
}

// Every thread of every CTA in the cluster: barrier with release/acquire at cluster scope.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;" ::
          : "memory");
}

// Every thread of every CTA in the cluster: barrier without memory ordering. For the end of a
// kernel whose only remote accesses were loads: the caller must have consumed every remote
// load's result before the call (so the loads are complete; `.relaxed` itself orders nothing);
// then no CTA leaves while a peer still reads its shared memory, and the arrive does not wait
// for the thread's global stores, as `.release` does (MEMBAR.ALL.GPU in the SASS).
__device__ __forceinline__ void cluster_sync_relaxed() {
  asm volatile(
      "barrier.cluster.arrive.relaxed.aligned;\n"
      "barrier.cluster.wait.aligned;" ::
          : "memory");
}

// Named barrier `id` (1..15; 0 is __syncthreads) over `count` threads, a multiple of 32:
// lets one warpgroup synchronise without stopping the others.
__device__ __forceinline__ void named_barrier_sync(u32 id, u32 count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

}  // namespace tc::tile
