// Batched decode wgmma kernel, host side, the launch: the TMA maps, the K split's arrival token,
// whether the split runs in thread-block clusters, the X conversion kernel and the kernel itself,
// and the choice of the kernel instance (Cfg) for the geometry quant_mma_b32_geometry.cu plans.
// The one translation unit that instantiates quant_mma_b32_kernel.cuh (whose comment gives the
// design) and the convert kernels (quant_mma_b32_convert.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/knobs.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/quant_launch.cuh"
#include "cuda/quant_mma_b32.h"
#include "cuda/quant_mma_b32_convert.cuh"
#include "cuda/quant_mma_b32_geometry.cuh"
#include "cuda/quant_mma_b32_kernel.cuh"
#include "cuda/tile/tma_host.h"

namespace tc::cuda::quant {
namespace {

using namespace tc::tile;
using b32::Cfg;
using b32::Geo;
using b32::supports;

// W as a 2-D byte tensor [N][row bytes] read in unswizzled boxes of `box` bytes (80: Q4_0 /
// Q4_K, 144: Q8_0; pairs 144 / 272) x `rows` rows (out-of-range bytes and rows read as zero):
// the prefill kernel's map with a taller box. A box row is at most 256 elements, so boxes
// wider than 256 bytes count 2-byte elements (the kernel's coordinates then too).
bool encode_w(TmaMap* map, const void* w, size_t row_bytes, int n, uint32_t box, uint32_t rows) {
  auto enc = tma_encoder();
  if (!enc || !tma_pitch_ok(row_bytes) || !tma_base_ok(w)) return false;
  const uint32_t e = box > 256 ? 2 : 1;
  cuuint64_t dims[3] = {row_bytes / e, cuuint64_t(n), 1};
  cuuint64_t strides[2] = {row_bytes, row_bytes * cuuint64_t(n)};
  cuuint32_t boxes[3] = {box / e, rows, 1};
  cuuint32_t estr[3] = {1, 1, 1};
  return enc(reinterpret_cast<CUtensorMap*>(map),
             e == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8, 3,
             const_cast<void*>(w), dims, strides, boxes, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// A new token per launch for the K-split arrival words (b32::Params::cnt): 56 bits of a
// splitmix64 sequence, never 0.
unsigned long long next_token() {
  static std::atomic<uint64_t> seq{0};
  uint64_t z = (seq.fetch_add(1, std::memory_order_relaxed) + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (z >> 8) | 1;
}

// Whether the K split runs inside thread-block clusters (quant_mma_b32_cluster.cuh; by default,
// TC_QUANT_B32_CLUSTER=0 keeps the workspace fixup, A/B): 2..8 splits and every cluster of the
// launch resident at once (cudaOccupancyMaxActiveClusters, asked once per configuration, split
// count and device), so that no tile waits for a second wave of clusters. On the H200
// (2026-11-30 00:27 UTC) clusters of 8 at this kernel's shared memory do not fit 16 at once, so
// O and down (16 tiles x 8 splits) keep the workspace fixup; QKV (48 x 2) takes clusters; gate+up
// (86 x 3) would not fit. Measured there: 4096x4096 M = 32 split 2 / 4 ways 18.1 / 14.1 us
// against 19.7 / 15.9 with the workspace fixup; the 7B step at batch 32 Q4_0 2.813-2.834 ms
// against 2.868-2.882 (Q4_K 3.307-3.328 against 3.351-3.360, Q8_0 3.526-3.532 against
// 3.560-3.574).
template <class C>
bool cluster_fits(const Geo& g) {
  if (g.splits < 2 || g.splits > b32::kMaxClusterSplits) return false;
  const char* v = tc::knobs::get(tc::knobs::kQuantB32Cluster);
  if (v && std::strcmp(v, "0") == 0) return false;
  // Resident clusters + 1 per device (0: ask); devices past the table ask on every launch
  // (before, device d and d + 8 shared a slot: review, 2026-11-30).
  constexpr int kDevices = 16;
  static std::atomic<int> most[kDevices][b32::kMaxClusterSplits + 1];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  std::atomic<int> spare{0};
  std::atomic<int>& known = dev >= 0 && dev < kDevices ? most[dev][g.splits] : spare;
  int n = known.load(std::memory_order_relaxed);
  if (n == 0) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(unsigned(g.splits), 1, 1);
    cfg.blockDim = dim3(C::kThreads);
    cfg.dynamicSmemBytes = C::kSmem;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = unsigned(g.splits);
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, b32::mma_b32_kernel<C>, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();
      clusters = 0;
    }
    n = clusters + 1;
    known.store(n, std::memory_order_relaxed);
  }
  return g.tiles <= n - 1;
}

template <class C>
tc_status_t launch_cfg(const Args& a, const Geo& g, cudaStream_t s) {
  // X given in f16, which the kernel takes as it is (every format since Q4_0's decode stopped
  // needing X / 16 at k 16..31, q4_0_frags_inplace): its TMA boxes read the caller's X [M][K]
  // itself, the layout the convert kernel writes, so that launch and its dependency hop go
  // (TC_QUANT_B32_CONVERT=always keeps them, A/B; the same bits).
  const char* conv = tc::knobs::get(tc::knobs::kQuantB32Convert);  // quant_mma_b32_convert.cuh
  const bool direct =
      !g.xin && a.x_dtype == TC_DTYPE_F16 && !(conv && std::strcmp(conv, "always") == 0);
  TmaMap map_x, map_w;
  std::memset(&map_x, 0, sizeof map_x);  // not read with g.xin
  if ((!g.xin && !tma_encode_3d(&map_x, direct ? a.x : a.work, 2, uint64_t(a.K), uint64_t(a.M), 1,
                                uint64_t(a.K) * 2, 0, 64, C::NX)) ||
      !encode_w(&map_w, a.w, w_row_bytes(a), a.N, C::kWBox, C::kRows))
    return TC_ERROR_NOT_SUPPORTED;
  const auto kernel = b32::mma_b32_kernel<C>;
  const tc_status_t st = allow_smem(reinterpret_cast<const void*>(kernel), C::kSmem);
  if (st != TC_SUCCESS) return st;
  uint8_t* work = static_cast<uint8_t*>(a.work);
  // The K-split fixup keeps 16 16-byte loads a thread in flight (Params::fixup); A/B:
  // TC_QUANT_B32_FIXUP=vec8 (8 a round, c79865c) / elem (one element and its splits a round):
  // the same adds in the same order, the same bits.
  const char* fix = tc::knobs::get(tc::knobs::kQuantB32Fixup);
  const int fixup = !fix                            ? b32::kFixupWide
                    : std::strcmp(fix, "elem") == 0 ? b32::kFixupElem
                    : std::strcmp(fix, "vec8") == 0 ? b32::kFixupVec8
                                                    : b32::kFixupWide;
  const bool cluster = cluster_fits<C>(g);
  b32::Params p{a.M,   a.N,     a.K, g.tiles, g.splits, g.per,   fixup,
                g.xin, cluster, a.x, a.y,     nullptr,  nullptr, next_token()};
  p.xk = x_kind(a.x_dtype);
  // TC_QUANT_B32_WBATCH=n: the W boxes of n stages issued together (Params::batch; A/B).
  if (const char* v = tc::knobs::get(tc::knobs::kQuantB32Wbatch))
    p.batch = std::max(1, std::atoi(v));
  const char* abl =
      tc::knobs::get(tc::knobs::kQuantB32Ablate);  // measurement only: Y is not computed
  p.stream_only = !abl                              ? 0
                  : std::strcmp(abl, "stream") == 0 ? 1
                  : std::strcmp(abl, "w") == 0      ? 2
                                                    : 0;
  if (g.splits > 1) {
    p.cnt = reinterpret_cast<unsigned long long*>(work + g.x_bytes);
    p.part = reinterpret_cast<float*>(work + g.x_bytes + g.cnt_bytes);
  }
  bool pdl = a.pdl;
  if (!g.xin && !direct) {
    const uint32_t total8 = uint32_t(size_t(a.M) * a.K / 8);
    auto* out = reinterpret_cast<uint4*>(work);
    const uint32_t per_cta = b32::kConvThreads * b32::kConvUnroll;
    const cudaError_t e =
        conv && std::strcmp(conv, "resident") == 0
            ? launch_ex(b32::convert_x_resident_kernel,
                        dim3(std::min<uint32_t>((total8 + per_cta - 1) / per_cta,
                                                uint32_t(std::max(1, sm_count())))),
                        dim3(b32::kConvThreads), 0, s, 1, a.pdl, a.x, p.xk, total8, out)
            : launch_ex(b32::convert_x_kernel, dim3((total8 + 255) / 256), dim3(256), 0, s, 1,
                        a.pdl, a.x, p.xk, total8, out);
    if (e != cudaSuccess) return cuda_fail(e, "quant b32 convert-X kernel launch");
    pdl = true;  // W streams in while the conversion runs
  }
  const dim3 grid = cluster ? dim3(g.splits, g.tiles) : dim3(g.tiles, g.splits);
  p.trace = bulk_trace::slot(a.N, a.K, int(grid.x * grid.y), 10 + C::FMT);
  const cudaError_t e = launch_ex(kernel, grid, dim3(C::kThreads), C::kSmem, s,
                                  cluster ? g.splits : 1, pdl, map_x, map_w, p);
  return e == cudaSuccess ? TC_SUCCESS : cuda_fail(e, "quant b32 wgmma kernel launch");
}

// F<C>(...) for the configuration of `g` (format FMT).
template <int FMT, template <class> class F, class... T>
auto with_cfg(const Geo& g, T&&... t) {
  if constexpr (FMT != kQ8_0) {  // three warpgroups: Q4_0 and Q4_K only (warpgroups)
    if (g.pair && g.nw == 3)
      return g.nx == 16 ? F<Cfg<FMT, 3, 16, true>>::run(t...) : F<Cfg<FMT, 3, 32, true>>::run(t...);
    if (g.nw == 3)
      return g.nx == 16 ? F<Cfg<FMT, 3, 16>>::run(t...) : F<Cfg<FMT, 3, 32>>::run(t...);
  }
  if (g.pair)
    return g.nx == 16 ? F<Cfg<FMT, 4, 16, true>>::run(t...) : F<Cfg<FMT, 4, 32, true>>::run(t...);
  if (g.nw == 2) return g.nx == 16 ? F<Cfg<FMT, 2, 16>>::run(t...) : F<Cfg<FMT, 2, 32>>::run(t...);
  return g.nx == 16 ? F<Cfg<FMT, 4, 16>>::run(t...) : F<Cfg<FMT, 4, 32>>::run(t...);
}
template <class C>
struct Launch {
  static tc_status_t run(const Args& a, const Geo& g, cudaStream_t s) {
    return launch_cfg<C>(a, g, s);
  }
};
template <class C>
struct ClusterFits {
  static bool run(const Geo& g) {
    const auto kernel = b32::mma_b32_kernel<C>;
    return allow_smem(reinterpret_cast<const void*>(kernel), C::kSmem) == TC_SUCCESS &&
           cluster_fits<C>(g);
  }
};
template <template <class> class F, class... T>
auto with_fmt(const Args& a, const Geo& g, T&&... t) {
  if (a.w_dtype == TC_DTYPE_Q8_0) return with_cfg<kQ8_0, F>(g, t...);
  return a.w_dtype == TC_DTYPE_Q4_0 ? with_cfg<kQ4_0, F>(g, t...) : with_cfg<kQ4_K, F>(g, t...);
}

}  // namespace

tc_status_t launch_mma_b32(const Args& a, void* stream) {
  std::string why;
  Geo g;
  if (!supports(a, why, g)) return TC_ERROR_NOT_SUPPORTED;
  return with_fmt<Launch>(a, g, a, g, static_cast<cudaStream_t>(stream));
}

bool mma_b32_cluster_split(const Args& a) {
  std::string why;
  Geo g;
  return supports(a, why, g) && with_fmt<ClusterFits>(a, g, g);
}

}  // namespace tc::cuda::quant
