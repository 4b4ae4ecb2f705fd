// Device side of TMA (cp.async.bulk.tensor): tiled loads into shared memory that complete on
// an mbarrier. The 128-byte map is built on the host (tma_host.h) and passed as a
// `const __grid_constant__ TmaMap` kernel parameter. PTX ISA "cp.async.bulk.tensor";
// hopper.md section 3 (box rules, OOB zero fill, expect_tx = full box bytes).
#pragma once

#include "mbarrier.cuh"

namespace tc::tile {

// Same size and alignment as CUtensorMap; opaque to the device code.
struct alignas(128) TmaMap {
  u64 opaque[16];
};

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

}  // namespace tc::tile
