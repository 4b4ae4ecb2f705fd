// Fused Q4 prefill GEMM, host side: the TMA maps (W as a 2-D byte tensor), the A/B knobs and
// the launch (under PDL) of the kernel in quant_prefill_kernel.cuh, whose comment gives the
// design and its measurements.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/knobs.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/quant_launch.cuh"
#include "cuda/quant_prefill_kernel.cuh"
#include "cuda/tile/tma_host.h"

namespace tc::cuda::quant {
namespace {

using namespace tc::tile;
using prefill::Cfg;
using prefill::kDefaultCluster;
using prefill::kHdrBox;
using prefill::kTileW;
using prefill::kTileX;

// W as a 2-D byte tensor [N][row_bytes] (a third dimension of 1 for tma_load_3d), read in
// unswizzled boxes `box` bytes wide and kTileW rows tall; out-of-range bytes and rows read as
// zero. tma_encode_3d (tile/tma_host.h) makes 128B-swizzled maps only.
bool encode_w_bytes(TmaMap* map, const void* w, size_t row_bytes, int n, uint32_t box) {
  auto enc = tma_encoder();
  if (!enc || !tma_pitch_ok(row_bytes) || !tma_base_ok(w)) return false;
  cuuint64_t dims[3] = {row_bytes, cuuint64_t(n), 1};
  cuuint64_t strides[2] = {row_bytes, row_bytes * cuuint64_t(n)};
  cuuint32_t boxes[3] = {box, uint32_t(kTileW), 1};
  cuuint32_t estr[3] = {1, 1, 1};
  return enc(reinterpret_cast<CUtensorMap*>(map), CU_TENSOR_MAP_DATA_TYPE_UINT8, 3,
             const_cast<void*>(w), dims, strides, boxes, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace

bool prefill_q4_wgmma_supports(const Args& a, std::string& why) {
  int dev = 0, major = 0, minor = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (major != 9 || minor != 0) return (why = "needs sm_90 (wgmma)", false);
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q4_K)
    return (why = "weights not Q4_0 / Q4_K", false);
  if (a.x_dtype != TC_DTYPE_F32) return (why = "activations not f32", false);
  if (a.K <= 0 || a.K % 256 != 0) return (why = "K % 256 != 0 (W rows not TMA-legal)", false);
  if (reinterpret_cast<uintptr_t>(a.w) % 16 != 0) return (why = "W not 16-byte aligned", false);
  if (!tma_encoder()) return (why = "no cuTensorMapEncodeTiled in the driver", false);
  return true;
}

namespace {

bool knob_is(tc::knobs::Id id, const char* value) {
  return tc::knobs::is(id, value);
}

// Launches configuration C (maps encoded for its W box) on `grid`.
template <class C>
tc_status_t launch_cfg(const Args& a, const void* x16, dim3 grid, bool pdl, cudaStream_t s) {
  TmaMap map_x, map_w, map_h;
  const size_t rb = w_row_bytes(a);
  if (!tma_encode_3d(&map_x, x16, 2, uint64_t(a.K), uint64_t(a.M), 1, uint64_t(a.K) * 2, 0, 64,
                     kTileX) ||
      !encode_w_bytes(&map_w, a.w, rb, a.N, C::kWBox) ||
      !encode_w_bytes(&map_h, a.w, rb, a.N, kHdrBox))
    return TC_ERROR_NOT_SUPPORTED;
  const auto kernel = prefill::prefill_q4_wgmma_kernel<C>;
  const tc_status_t st = allow_smem(reinterpret_cast<const void*>(kernel), C::kSmem);
  if (st != TC_SUCCESS) return st;
  const cudaError_t e = launch_ex(kernel, grid, dim3(C::kThreads), C::kSmem, s, C::CL, pdl, map_x,
                                  map_w, map_h, a.M, a.N, a.K, a.y);
  return e == cudaSuccess ? TC_SUCCESS : cuda_fail(e, "quant prefill fused Q4 wgmma kernel launch");
}

template <int CL>
tc_status_t launch_cl(const Args& a, const void* x16, dim3 grid, bool pdl, cudaStream_t s) {
  // A/B knob TC_QUANT_PREFILL_Q4K_SCALES=0 / stage (Q4_K: the consumers compute the scales,
  // or the helpers every stage; Cfg). Measured and dropped (H200 20:16 UTC, docs/quant.md):
  // Q4_0 with the 112-byte W box (as fast) and with five stages (slower).
  if (a.w_dtype == TC_DTYPE_Q4_0) return launch_cfg<Cfg<kQ4_0, CL, 0>>(a, x16, grid, pdl, s);
  if (knob_is(tc::knobs::kQuantPrefillQ4kScales, "0"))
    return launch_cfg<Cfg<kQ4_K, CL, 0>>(a, x16, grid, pdl, s);
  if (knob_is(tc::knobs::kQuantPrefillQ4kScales, "stage"))
    return launch_cfg<Cfg<kQ4_K, CL, 1>>(a, x16, grid, pdl, s);
  return launch_cfg<Cfg<kQ4_K, CL, 2>>(a, x16, grid, pdl, s);
}

}  // namespace

tc_status_t launch_prefill_q4_wgmma(const Args& a, const void* x16, void* stream) {
  std::string why;
  if (!prefill_q4_wgmma_supports(a, why) || reinterpret_cast<uintptr_t>(x16) % 16 != 0)
    return TC_ERROR_NOT_SUPPORTED;
  // TC_QUANT_PREFILL_CLUSTER=1 / 2: single CTAs or CTA pairs sharing X (an A/B knob; the
  // default is the faster on the H200). TC_QUANT_PREFILL_PDL=0: no programmatic dependent
  // launch (A/B).
  const char* knob = tc::knobs::get(tc::knobs::kQuantPrefillCluster);
  const int cl = knob && std::strcmp(knob, "2") == 0 ? 2 : knob ? 1 : kDefaultCluster;
  const bool pdl = !knob_is(tc::knobs::kQuantPrefillPdl, "0");
  const int tiles_w = (a.N + kTileW - 1) / kTileW;
  // Pairs need an even grid: an extra tile past N reads zeros (TMA) and stores nothing.
  const dim3 grid(cl == 2 ? (tiles_w + 1) / 2 * 2 : tiles_w, (a.M + kTileX - 1) / kTileX);
  auto s = static_cast<cudaStream_t>(stream);
  return cl == 2 ? launch_cl<2>(a, x16, grid, pdl, s) : launch_cl<1>(a, x16, grid, pdl, s);
}

}  // namespace tc::cuda::quant
