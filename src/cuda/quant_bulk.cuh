// The weight stream of the bulk quantized kernels (gemv_quant_bulk.cu, quant_mma_bulk.cu):
// 1-D bulk copies (cp.async.bulk, the TMA's linear mode) of whole weight rows into a ring of
// shared-memory stages, each completed on an mbarrier (PTX ISA "cp.async.bulk",
// "mbarrier"). One producer lane issues the copies; consumer warps wait on a stage's `full`
// barrier, decode from shared memory and arrive on its `empty` barrier, which the producer
// waits on before it reuses the slot. The barriers are the tile library's (src/cuda/tile/), kept
// here as 8-byte words, as the kernels lay them out. Rows are copied whole, so a stage of R
// consecutive rows is one contiguous range when the row bytes are a multiple of 16 (the copy's
// granule): K % 256 == 0 for Q4_0 / Q8_0 (18- and 34-byte blocks), any K for Q4_K (144-byte
// blocks).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/tile/grid_dep.cuh"
#include "cuda/tile/mbarrier.cuh"
#include "cuda/tile/tma.cuh"

namespace tc::cuda::quant::bulk {

__device__ __forceinline__ tile::mbarrier* mbar(uint64_t* bar) {
  return reinterpret_cast<tile::mbarrier*>(bar);
}

__device__ __forceinline__ void bar_init(uint64_t* bar, uint32_t count) {
  tile::mbar_init(mbar(bar), count);
}

// Makes the inits visible to the async proxy (the bulk copies) before the first copy.
__device__ __forceinline__ void fence_barrier_init() {
  tile::mbar_fence_init();
}

__device__ __forceinline__ void bar_arrive(uint64_t* bar) {
  tile::mbar_arrive(mbar(bar));
}

// Arrives and announces `bytes` of copy traffic that must land before the phase completes.
__device__ __forceinline__ void bar_expect_tx(uint64_t* bar, uint32_t bytes) {
  tile::mbar_arrive_expect_tx(mbar(bar), bytes);
}

// Blocks until the phase with parity `parity` has completed (a fresh barrier is in phase 0).
__device__ __forceinline__ void bar_wait(uint64_t* bar, uint32_t parity) {
  tile::mbar_wait(mbar(bar), parity);
}

// `bytes` (a multiple of 16; dst and src 16-byte aligned) from global to shared memory,
// completing that many bytes of transaction count on `bar`.
__device__ __forceinline__ void copy(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  tile::bulk_copy_g2s(dst, src, bytes, mbar(bar));
}

// Programmatic dependent launch (sm_90): wait for the previous grid's completion and memory;
// let the next PDL grid be scheduled. No-ops when the launch had no PDL attribute.
__device__ __forceinline__ void grid_wait() {
  tile::grid_dep_wait();
}
__device__ __forceinline__ void grid_launch_dependents() {
  tile::grid_dep_launch_dependents();
}

// Named barrier over the first `count` threads (the consumer warps), id 1.
__device__ __forceinline__ void sync_consumers(uint32_t count) {
  tile::named_barrier_sync(1, count);
}

// Clusters (PTX ISA "mapa", "st.shared::cluster", "barrier.cluster", "mbarrier"): the shared
// address of `p`'s counterpart in cluster CTA `rank`, a store there, an arrival on a peer's
// mbarrier (release at cluster scope) and the matching wait on one's own.
__device__ __forceinline__ uint32_t remote(const void* p, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(r)
               : "r"(tile::smem_addr(p)), "r"(rank));
  return r;
}
__device__ __forceinline__ void st_remote(uint32_t addr, float v) {
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory");
}
// The same for 16 bytes.
__device__ __forceinline__ void st_remote4(uint32_t addr, int4 v) {
  asm volatile("st.shared::cluster.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ void arrive_remote(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(bar)
               : "memory");
}
__device__ __forceinline__ void wait_cluster(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred P;\nW_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%0], %1;\n"
      "@!P bra W_%=;\n}\n" ::"r"(tile::smem_addr(bar)),
      "r"(parity)
      : "memory");
}
// The cluster barrier in its two halves, each thread for itself (not .aligned: the warps of a
// CTA reach it on different paths). A thread waits for a phase before it arrives on the next.
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

// Thread 0 of a bulk MMA kernel's CTA: the ring's barriers (full: the producer's one arrival
// and the copies' bytes; empty: one arrival per consumer warp) and `extra` (one arrival, X's
// copy), made visible to the bulk copies. A __syncthreads() must follow.
__device__ __forceinline__ void init_ring(uint64_t* full, uint64_t* empty, int S,
                                          uint32_t consumer_warps, uint64_t* extra) {
  for (int s = 0; s < S; ++s) {
    bar_init(&full[s], 1);
    bar_init(&empty[s], consumer_warps);
  }
  bar_init(extra, 1);
  fence_barrier_init();
}

// The producer warp of the bulk MMA kernels (quant_mma_bulk.cu, quant_mma_f16.cu), whose passes
// are 16 rows: stage s of the CTA's `count` stages is chunk s % chunks of pass p0 + s / chunks,
// i.e. units (s % chunks) uc .. (< units) of `unit_bytes` each from byte col0 of each of its rows
// (N rows of `rb` bytes in W), lane r copying row r into slot s % S (`stride` bytes a row). Once
// the first min(S, count) stages are in flight, after_first() runs: the kernels wait for the
// previous grid there and copy X. With a `gate` barrier, stage `gate_at` and the later ones are
// issued only after its phase 0 completed (quant_mma_xreg.cu: the consumers have loaded X, so
// X's loads do not queue behind a whole ring of weight copies); with pace > 0 at most `pace`
// stages are in flight (stage s waits for stage s - pace to land: the ring still fills, but
// what X's loads queue behind is bounded).
template <class After>
__device__ __forceinline__ void produce_passes(
    const uint8_t* W, int64_t N, uint32_t rb, size_t col0, int units, int uc, int unit_bytes,
    int p0, int count, uint8_t* ring, uint32_t stride, int S, uint64_t* full, uint64_t* empty,
    After after_first, int gate_at = -1, uint64_t* gate = nullptr, int pace = 0, int rpc = 1) {
  constexpr int kRows = 16;
  const int lane = threadIdx.x % 32, chunks = (units + uc - 1) / uc, first = min(S, count);
  for (int s = 0; s < count; ++s) {
    const int slot = s % S;
    if (s == gate_at && lane == 0) bar_wait(gate, 0);
    if (s >= S && lane == 0) bar_wait(&empty[slot], uint32_t((s / S - 1) & 1));
    // Stage s - pace's slot cannot have completed a later phase: s - pace + S > s is not issued
    // (pace >= S asks for nothing the ring does not give).
    if (pace > 0 && pace < S && s >= pace && lane == 0)
      bar_wait(&full[(s - pace) % S], uint32_t(((s - pace) / S) & 1));
    const int64_t row0 = int64_t(p0 + s / chunks) * kRows;
    const int rows = int(N - row0 < kRows ? N - row0 : kRows);
    const int u0 = (s % chunks) * uc;
    const uint32_t bytes = uint32_t(min(uc, units - u0) * unit_bytes);
    if (lane == 0) bar_expect_tx(&full[slot], bytes * rows);
    __syncwarp();
    // rpc > 1 (whole rows only: bytes == rb): lane i copies rows i rpc.. in one copy, to i rpc
    // slots of the stage (the rows inside it rb apart).
    if (lane * rpc < rows)
      copy(ring + size_t(slot) * kRows * stride + lane * rpc * stride,
           W + (row0 + lane * rpc) * rb + col0 + size_t(u0) * unit_bytes,
           bytes * uint32_t(min(rpc, rows - lane * rpc)), &full[slot]);
    if (s == first - 1) after_first();
  }
}

}  // namespace tc::cuda::quant::bulk
