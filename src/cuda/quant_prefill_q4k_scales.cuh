// Q4_K scales of the fused prefill GEMM (quant_prefill_fused.cu): each sub-block's f16 scale
// d sc and negated min -(dmin m), as half2 pairs in a per-stage slot that the consumers read
// with one 16-byte load per row and sub-step. Computed by helper threads (warps 2-3 of the
// producer warpgroup), or by the consumers themselves (q4k_half_scales) in the first form.
// C is the kernel's Cfg: kStages, kWSlot, kScaleSlot, kHdrStride (bytes between two rows'
// headers in a W slot), kHelperFirst, kPerBlock.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/quant_dequant.cuh"
#include "cuda/quant_prefill_wgmma.cuh"
#include "cuda/tile/mbarrier.cuh"

namespace tc::cuda::quant {

// Q4_K: sub-block j's f16 scale d sc and negated min -(dmin m) for one row's header.
__device__ __forceinline__ void q4k_half_scales(const uint8_t* hdr, int j, __half* s, __half* nm) {
  int sc, m;
  q4k_scale_min(j, hdr + 4, &sc, &m);
  *s = __float2half_rn(h2f(ld_u16(hdr)) * float(sc));
  *nm = __float2half_rn(-(h2f(ld_u16(hdr + 2)) * float(m)));
}

// One row's scale-slot entry for stage half H of a Q4_K block (sub-blocks 4 H .. 4 H + 3, as
// constants so that the header stays in registers), as the consumer would compute it.
template <int H>
__device__ __forceinline__ void q4k_slot_row(const uint8_t* hb, uint8_t* out) {
  uint32_t sv[4], mv[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    __half sc, nm;
    q4k_half_scales(hb, 4 * H + j, &sc, &nm);
    sv[j] = bits(__half2half2(sc));
    mv[j] = bits(__half2half2(nm));
  }
  uint4* o = reinterpret_cast<uint4*>(out);
  o[0] = make_uint4(sv[0], sv[1], mv[0], mv[1]);  // sub-step 0: sub-blocks 4 H, 4 H + 1
  o[1] = make_uint4(sv[2], sv[3], mv[2], mv[3]);  // sub-step 1: 4 H + 2, 4 H + 3
}

// Helper threads (SCALES): rows h and h + 64 of the stages' headers -> the scale slots, then
// one arrival each on sfull. Per block (kPerBlock), at even kb for stages kb and kb + 1 (K %
// 256 == 0: nk is even). Writing stage kb + 1's slot early is safe: full[kb] completing means
// the consumers released stage kb - 4, which they do after loading the scales of stage kb - 3,
// the last user of that slot; and every helper's arrival for kb - 3 precedes it.
template <class C>
__device__ __forceinline__ void q4k_scale_helper(const uint8_t* ws, uint8_t* ss,
                                                 tile::mbarrier* full, tile::mbarrier* sfull,
                                                 int nk) {
  constexpr int S = C::kStages;
  const int h = threadIdx.x - C::kHelperFirst;
  for (int kb = 0; kb < nk; kb += C::kPerBlock ? 2 : 1) {
    tile::mbar_wait(&full[kb % S], (kb / S) & 1);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = h + 64 * r;
      alignas(16) uint8_t hb[16];  // the block header: d, dmin, scales[12]
      *reinterpret_cast<uint4*>(hb) =
          *reinterpret_cast<const uint4*>(ws + (kb % S) * C::kWSlot + row * C::kHdrStride);
      uint8_t* slot = ss + (kb % S) * C::kScaleSlot + row * 32;
      if (C::kPerBlock) {
        q4k_slot_row<0>(hb, slot);
        q4k_slot_row<1>(hb, ss + ((kb + 1) % S) * C::kScaleSlot + row * 32);
      } else if (kb & 1) {
        q4k_slot_row<1>(hb, slot);
      } else {
        q4k_slot_row<0>(hb, slot);
      }
    }
    tile::mbar_arrive(&sfull[kb % S]);
    if (C::kPerBlock) tile::mbar_arrive(&sfull[(kb + 1) % S]);
  }
}

}  // namespace tc::cuda::quant
