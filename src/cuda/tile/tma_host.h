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

// Returns the driver's encoder, or nullptr when the driver lacks it (looked up once).
inline PFN_cuTensorMapEncodeTiled_v12000 tma_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
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

// A 3-D map over a batch of row-major matrices of `elem_bytes`-byte elements: `inner` elements
// per row (contiguous), `outer` rows `pitch` bytes apart, `batch` matrices `batch_pitch` bytes
// apart (batch_pitch 0 with batch 1 for a single matrix). Box = box_inner x box_outer x 1 with
// 128-byte swizzle, so box_inner * elem_bytes must be 128. Loads read OOB elements as zero;
// stores skip them.
inline bool tma_encode_3d(TmaMap* map, const void* base, uint32_t elem_bytes, uint64_t inner,
                          uint64_t outer, uint64_t batch, uint64_t pitch, uint64_t batch_pitch,
                          uint32_t box_inner, uint32_t box_outer) {
  auto enc = tma_encoder();
  if (!enc || box_inner * elem_bytes != 128 || box_outer > 256) return false;
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4) return false;
  // Raw bits: TMA copies, it never converts, so unsigned types of the right width serve all.
  const CUtensorMapDataType dt = elem_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                 : elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                                   : CU_TENSOR_MAP_DATA_TYPE_UINT32;
  if (batch <= 1) batch_pitch = pitch * outer;  // unused dimension; any legal stride
  cuuint64_t dims[3] = {inner, outer, batch < 1 ? 1 : batch};
  cuuint64_t strides[2] = {pitch, batch_pitch};
  cuuint32_t box[3] = {box_inner, box_outer, 1};
  cuuint32_t estr[3] = {1, 1, 1};
  CUresult r = enc(reinterpret_cast<CUtensorMap*>(map), dt, 3, const_cast<void*>(base), dims,
                   strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

static_assert(sizeof(TmaMap) == sizeof(CUtensorMap), "TmaMap must mirror CUtensorMap");

}  // namespace tc::tile
