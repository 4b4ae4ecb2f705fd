// Host side of TMA: encodes a tiled tensor map with cuTensorMapEncodeTiled, reached through
// cudaGetDriverEntryPointByVersion so that tc never links libcuda (ARCHITECTURE.md: a CUDA
// build must load on machines without a driver). Host-only, and plain C++ (g++ compiles it: it
// needs only the map type, not the device headers); device code includes tma.cuh.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "tma_map.h"

namespace tc::tile {

// The driver's entry point `name` (CUDA 12.0 ABI) as a Fn, or nullptr when the driver lacks it.
template <class Fn>
Fn driver_entry(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(p);
}

// Returns the driver's encoder, or nullptr when the driver lacks it (looked up once).
inline PFN_cuTensorMapEncodeTiled_v12000 tma_encoder() {
  static const auto fn = driver_entry<PFN_cuTensorMapEncodeTiled_v12000>("cuTensorMapEncodeTiled");
  return fn;
}

// Whether a row pitch / batch stride (bytes) and base pointer are legal for TMA: both must be
// multiples of 16 bytes (cuda.h, cuTensorMapEncodeTiled).
inline bool tma_pitch_ok(uint64_t bytes) {
  return bytes % 16 == 0 && bytes < (uint64_t(1) << 40);
}
inline bool tma_base_ok(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Returns the driver's cuTensorMapReplaceAddress, or nullptr (looked up once).
inline PFN_cuTensorMapReplaceAddress_v12000 tma_replacer() {
  static const auto fn =
      driver_entry<PFN_cuTensorMapReplaceAddress_v12000>("cuTensorMapReplaceAddress");
  return fn;
}

// Everything of a map but its base address.
struct TmaGeometry {
  uint64_t inner, outer, batch, pitch, batch_pitch;
  uint32_t elem_bytes, box_inner, box_outer;
};
// (nvcc compiles this header as C++17: no defaulted comparison.)
inline bool operator==(const TmaGeometry& x, const TmaGeometry& y) {
  return x.inner == y.inner && x.outer == y.outer && x.batch == y.batch && x.pitch == y.pitch &&
         x.batch_pitch == y.batch_pitch && x.elem_bytes == y.elem_bytes &&
         x.box_inner == y.box_inner && x.box_outer == y.box_outer;
}

// The maps this thread encoded last. A GEMM call encodes two or three maps, and encoding is the
// larger part of a launch-bound call's host time after the launch itself: the same map (same
// base, same geometry: a decode loop, a repeated call) is copied from here, and the same
// geometry at another base (rotating activations) is copied and given the new base with
// cuTensorMapReplaceAddress, which the driver documents for exactly that.
struct TmaCacheEntry {
  TmaMap map;
  TmaGeometry g;
  const void* base;
  bool used;
};
inline constexpr int kTmaCacheSlots = 8;
inline thread_local TmaCacheEntry t_tma_cache[kTmaCacheSlots];  // trivially initialized

inline bool tma_encode_uncached(TmaMap* map, const void* base, const TmaGeometry& g) {
  auto enc = tma_encoder();
  if (!enc || g.box_inner * g.elem_bytes != 128 || g.box_outer > 256) return false;
  if (g.elem_bytes != 1 && g.elem_bytes != 2 && g.elem_bytes != 4) return false;
  // Raw bits: TMA copies, it never converts, so unsigned types of the right width serve all.
  const CUtensorMapDataType dt = g.elem_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                 : g.elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                                     : CU_TENSOR_MAP_DATA_TYPE_UINT32;
  // batch <= 1: the unused dimension gets any legal stride.
  cuuint64_t dims[3] = {g.inner, g.outer, g.batch < 1 ? 1 : g.batch};
  cuuint64_t strides[2] = {g.pitch, g.batch <= 1 ? g.pitch * g.outer : g.batch_pitch};
  cuuint32_t box[3] = {g.box_inner, g.box_outer, 1};
  cuuint32_t estr[3] = {1, 1, 1};
  CUresult r = enc(reinterpret_cast<CUtensorMap*>(map), dt, 3, const_cast<void*>(base), dims,
                   strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

// A 3-D map over a batch of row-major matrices of `elem_bytes`-byte elements: `inner` elements
// per row (contiguous), `outer` rows `pitch` bytes apart, `batch` matrices `batch_pitch` bytes
// apart (batch_pitch 0 with batch 1 for a single matrix). Box = box_inner x box_outer x 1 with
// 128-byte swizzle, so box_inner * elem_bytes must be 128. Loads read OOB elements as zero;
// stores skip them. Served from this thread's cache when it can (TmaCacheEntry).
inline bool tma_encode_3d(TmaMap* map, const void* base, uint32_t elem_bytes, uint64_t inner,
                          uint64_t outer, uint64_t batch, uint64_t pitch, uint64_t batch_pitch,
                          uint32_t box_inner, uint32_t box_outer) {
  const TmaGeometry g{inner,      outer,     batch,    pitch, batch <= 1 ? 0 : batch_pitch,
                      elem_bytes, box_inner, box_outer};
  const uint64_t h = (reinterpret_cast<uintptr_t>(base) >> 4) * 0x9e3779b97f4a7c15ull ^
                     (inner * 31 + outer) * 0xff51afd7ed558ccdull ^ (uint64_t(box_outer) << 7);
  TmaCacheEntry& slot = t_tma_cache[(h >> 58) % kTmaCacheSlots];
  if (slot.used && slot.base == base && slot.g == g) {
    *map = slot.map;
    return true;
  }
  bool done = false;
  if (auto replace = tma_replacer()) {
    for (const TmaCacheEntry& e : t_tma_cache) {
      if (!e.used || !(e.g == g)) continue;
      *map = e.map;
      done = replace(reinterpret_cast<CUtensorMap*>(map), const_cast<void*>(base)) == CUDA_SUCCESS;
      break;
    }
  }
  if (!done && !tma_encode_uncached(map, base, g)) return false;
  slot = {*map, g, base, true};
  return true;
}

static_assert(sizeof(TmaMap) == sizeof(CUtensorMap), "TmaMap must mirror CUtensorMap");

}  // namespace tc::tile
