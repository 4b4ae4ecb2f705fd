// Device side of TMA (cp.async.bulk.tensor): tiled loads into shared memory that complete on
// an mbarrier, and tiled stores from shared memory tracked by bulk groups. The 128-byte map is
// built on the host (tma_host.h) and passed as a `const __grid_constant__ TmaMap` kernel parameter.
// PTX ISA "cp.async.bulk.tensor"; hopper.md section 3 (box rules, OOB zero fill, expect_tx = full
// box bytes).
#pragma once

#include "mbarrier.cuh"
#include "tma_map.h"

namespace tc::tile {

__device__ __forceinline__ void tma_prefetch_map(const TmaMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// Loads the box at element coordinates (c0 innermost, c1, c2) into `dst`.
__device__ __forceinline__ void tma_load_3d(void* dst, const TmaMap* map, mbarrier* bar, i32 c0,
                                            i32 c1, i32 c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(smem_addr(dst)),
      "l"(map), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Like tma_load_3d, but the box lands at the same shared-memory offset in every CTA of the
// cluster whose bit is set in `mask` (bit i = %cluster_ctarank i), completing bytes on each
// CTA's barrier at `bar`'s offset.
__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const TmaMap* map, mbarrier* bar,
                                                      i32 c0, i32 c1, i32 c2, u16 mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(smem_addr(dst)),
      "l"(map), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(mask)
      : "memory");
}

// 1-D bulk copy (the TMA's linear mode, no tensor map): `bytes` (a multiple of 16; both
// addresses 16-byte aligned) from global to shared memory, completing that many bytes of
// transaction count on `bar`. PTX ISA "cp.async.bulk".
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, u32 bytes,
                                              mbarrier* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

// Stores the box at element coordinates (c0, c1, c2) from `src` (same swizzle as the map).
// Out-of-range box elements are not written. Completion is tracked per thread by bulk groups.
__device__ __forceinline__ void tma_store_3d(const TmaMap* map, u32 src_smem, i32 c0, i32 c1,
                                             i32 c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(map),
      "r"(src_smem), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Waits until at most N of this thread's bulk groups still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// Waits until at most N of this thread's bulk groups are incomplete (writes done).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

}  // namespace tc::tile
