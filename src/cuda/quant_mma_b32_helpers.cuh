// The batched decode kernel's helper warps (quant_mma_b32_kernel.cuh): warps 1..3 of the
// producer warpgroup. For Q4_K they turn the block headers into f16 scales; with Params::xin
// (where a CTA has <= 4 stages, or TC_QUANT_B32_XCONV=helpers; elsewhere TMA copies f16 X, the
// caller's when X is f16, else what the convert kernel wrote) they also convert X from f32, f16 or
// bf16 (Params::xk; half X is widened to f32 and then rounded as f32 X is: the same bits) into each
// stage's two 128B-swizzled f16 boxes. That removes a launch and its dependency hop per call (the
// convert grid had to end before the kernel's X copy could start) and reads X from L2 (f32 X: twice
// the bytes of f16 X: 0.9 bytes per byte of Q4_0 weights at NW = 4, NX = 32). H200 22:53 UTC:
// faster where a CTA has few stages (rotated 4096x4096, M = 16: 11.9 against 13.5 us), much slower
// where it streams (131072x4096, M = 32: 217 against 123 us; the 7B step at batch 32 3.73 against
// ~2.82 ms): one stage's loads in flight, so each stage costs a loaded L2 round trip (~1.7 us a
// stage there) instead of the consumers' ~1 us. Two stages in flight (registers: 96 a thread at M =
// 32) or an f32 staging slot filled by TMA would be the next form.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/quant_dequant.cuh"
#include "cuda/quant_prefill_q4k_scales.cuh"
#include "cuda/tile/grid_dep.cuh"
#include "cuda/tile/mbarrier.cuh"

namespace tc::cuda::quant::b32 {

using namespace tc::tile;

constexpr int kBK = 128;  // k per stage

__device__ __forceinline__ uint32_t h2(float a, float b) {
  const __half2 v = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// Eight values of X to f16, round to nearest.
__device__ __forceinline__ uint4 x_chunk_f16(float4 a, float4 b) {
  return make_uint4(h2(a.x, a.y), h2(a.z, a.w), h2(b.x, b.y), h2(b.z, b.w));
}

// The chunk of 8 elements of X (kind xk, XKind) from element e (e % 8 == 0), raw: two 16-byte
// words of f32 (r[0], r[1]) or one of halves (r[0]).
__device__ __forceinline__ void x_chunk_load(const void* x, int xk, size_t e, uint4 (&r)[2]) {
  if (xk == kXF32) {
    const uint4* p = reinterpret_cast<const uint4*>(static_cast<const float*>(x) + e);
    r[0] = __ldg(p);
    r[1] = __ldg(p + 1);
  } else {
    r[0] = __ldg(reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(x) + e));
  }
}

// That chunk to f16 as above (halves widened to f32 first, exactly).
__device__ __forceinline__ uint4 x_chunk_f16(const uint4 (&r)[2], int xk) {
  if (xk == kXF32) {
    const float4 a = make_float4(__uint_as_float(r[0].x), __uint_as_float(r[0].y),
                                 __uint_as_float(r[0].z), __uint_as_float(r[0].w));
    const float4 b = make_float4(__uint_as_float(r[1].x), __uint_as_float(r[1].y),
                                 __uint_as_float(r[1].z), __uint_as_float(r[1].w));
    return x_chunk_f16(a, b);
  }
  float4 a, b;
  widen_x8(r[0], xk, a, b);
  return x_chunk_f16(a, b);
}

// Helper h (0 .. C::kHelpers - 1), stages kb0 .. kb0 + nk - 1. Per stage: wait for the slot
// to be free (empty), load the stage's X (M rows x 128 k, every chunk of the thread in
// flight at once), then (Q4_K, even stages) wait for the W box and write the scale slots of
// this stage and the next, then store X in f16 at its swizzled place, fence it for the
// tensor cores (async proxy) and arrive on xfull. Rows M..NX-1 of every slot are zeroed once
// (no stage writes them). Without P.xin only the Q4_K scales are made (X comes by TMA).
template <class C, class Params>
__device__ __forceinline__ void helpers(const Params& P, uint8_t* xs, const uint8_t* ws,
                                        uint8_t* ss, mbarrier* full, mbarrier* empty,
                                        mbarrier* sfull, mbarrier* xfull, int kb0, int nk, int h) {
  constexpr int S = C::kStages, NH = C::kHelpers, kChunks = C::NX * 16;  // 16 B chunks a stage
  constexpr int G = (kChunks + NH - 1) / NH;
  if (P.xin) {
    const int zero = (C::NX - P.M) * 8;  // 16-byte chunks of rows M..NX-1 of one box
    for (int i = h; i < 2 * S * zero; i += NH)
      *reinterpret_cast<uint4*>(xs + (i / zero) * C::kXHalf + P.M * 128 + (i % zero) * 16) =
          make_uint4(0, 0, 0, 0);
    grid_dep_wait();  // X is the previous grid's output
  }
  const int total = P.M * 16;
  for (int kb = 0; kb < nk; ++kb) {
    const int slot = kb % S;
    uint4 v[G][2];  // raw chunks (x_chunk_load)
    if (P.xin) {
      if (kb >= S) mbar_wait(&empty[slot], ((kb / S) & 1) ^ 1);
      const size_t k0 = size_t(kb0 + kb) * kBK;
#pragma unroll
      for (int u = 0; u < G; ++u) {
        const int i = h + u * NH;
        if (i < total) x_chunk_load(P.x, P.xk, size_t(i >> 4) * P.K + k0 + 8 * (i & 15), v[u]);
      }
    }
    if (C::FMT == kQ4_K && kb % 2 == 0) {
      mbar_wait(&full[slot], (kb / S) & 1);
      for (int row = h; row < C::kRows; row += NH) {
        alignas(16) uint8_t hb[16];
        *reinterpret_cast<uint4*>(hb) =
            *reinterpret_cast<const uint4*>(ws + C::w_off(slot) + row * C::kWBox);
        q4k_slot_row<0>(hb, ss + slot * C::kScaleSlot + row * 32);
        q4k_slot_row<1>(hb, ss + ((kb + 1) % S) * C::kScaleSlot + row * 32);
      }
      mbar_arrive(&sfull[slot]);
      mbar_arrive(&sfull[(kb + 1) % S]);
    }
    if (P.xin) {
      uint8_t* xd = xs + slot * C::kXStage;
#pragma unroll
      for (int u = 0; u < G; ++u) {
        const int i = h + u * NH;
        if (i < total) {
          const int m = i >> 4, j = i & 15;  // row, chunk: box j / 8, chunk j % 8 of its row
          *reinterpret_cast<uint4*>(xd + (j >> 3) * C::kXHalf + m * 128 +
                                    (((j & 7) ^ (m & 7)) << 4)) = x_chunk_f16(v[u], P.xk);
        }
      }
      fence_proxy_async();
      mbar_arrive(&xfull[slot]);
    }
  }
}

}  // namespace tc::cuda::quant::b32
