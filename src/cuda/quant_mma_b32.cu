// Batched decode wgmma kernel, host side: the K split, the workspace, the X conversion, the TMA
// maps and the launch of quant_mma_b32_kernel.cuh (whose comment gives the design).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/knobs.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/quant_launch.cuh"
#include "cuda/quant_mma_b32.h"
#include "cuda/quant_mma_b32_convert.cuh"
#include "cuda/quant_mma_b32_kernel.cuh"
#include "cuda/tile/tma_host.h"

namespace tc::cuda::quant {
namespace {

using namespace tc::tile;
using b32::Cfg;

constexpr size_t kAlign = 256;
size_t up(size_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}

// Consumer warpgroups, i.e. 64 W rows each a CTA: 3 for Q4_0 and Q4_K (192 rows, 512 threads),
// 4 for Q8_0 (256, 640; its three-warpgroup kernel at NX = 16 had its wgmma serialized by
// ptxas, C7513, so it is not built); TC_QUANT_B32_WG=2 / 3 / 4 forces a count (A/B; Q8_0 takes 2
// or 4). Three fill the H200's 132 SMs where four leave them idle (the 7B QKV projection: 64
// tiles x 2 splits = 128 CTAs against 48 x 2 = 96) and ran faster on every 7B shape, at the
// cost of 1/3 more X reads: H200 2026-11-30 02:37 UTC, 7B step, ms, 3 / 4 warpgroups (and the
// 5%-margin model mixing both): Q4_0 b16 2.054 / 2.545 (2.185), b32 2.262 / 2.596 (2.247);
// Q4_K b16 2.490 / 2.942 (2.613), b32 2.699 / 3.299 (2.945).
int warpgroups(tc_dtype_t w) {
  const char* v = tc::knobs::get(tc::knobs::kQuantB32Wg);
  const int forced =
      v && (std::strcmp(v, "2") == 0 || std::strcmp(v, "3") == 0 || std::strcmp(v, "4") == 0)
          ? *v - '0'
          : 0;
  if (w == TC_DTYPE_Q8_0) return forced == 2 ? 2 : 4;
  return forced != 0 ? forced : 3;
}

// Who converts X to f16: the kernel's helper warps from f32 where a CTA has at most
// kXinMaxStages stages (no convert launch, no dependency hop), else the convert kernel into the
// workspace, copied by TMA. The helpers keep one stage's loads in flight, a loaded L2 round trip
// a stage (~1.5-1.75 us on the stream shape against the consumers' ~1 us), so they only pay
// where the hop is a large part of a short CTA. H200 22:53 UTC, us, helpers vs kernel: 4096x4096
// (4 stages a CTA) M = 16 11.9 vs 13.5, M = 32 15.5 vs 16.0 (Q4_K 14.0 vs 15.2, 16.9 vs 17.7);
// 4096x11008 (12) M = 32 26.3 vs 23.1; 14336x4096 (16) 31.8 vs 25.2; 131072x4096 (32) 216.9 vs
// 123.3. TC_QUANT_B32_XCONV=helpers / kernel forces one (A/B).
enum class XConv { kAuto, kHelpers, kKernel };
constexpr int kXinMaxStages = 4;
XConv xconv_knob() {
  const char* v = tc::knobs::get(tc::knobs::kQuantB32Xconv);
  if (v && std::strcmp(v, "helpers") == 0) return XConv::kHelpers;
  if (v && std::strcmp(v, "kernel") == 0) return XConv::kKernel;
  return XConv::kAuto;
}

// Workspace: [X f16][arrival words][partial tiles] (the last two where K is split; X's room is
// kept where the helpers convert it unless forced, so that the split and the size do not
// depend on that choice).
struct Geo {
  int nx = 32, nw = 4, tiles = 0, splits = 1, per = 0;
  bool xin = true;
  bool pair = false;  // W boxes of two stages (Cfg::PAIR; wbox_pair)
  size_t x_bytes = 0, cnt_bytes = 0, work = 0;
};

// Splits of K in 128-k stages (Q4_K: even numbers, so that its 256-k blocks stay whole; Q4_0 /
// Q8_0 any: the 7B step's down projection then takes 11 stages a CTA instead of 12, gate+up 11
// in each of its two waves; TC_QUANT_B32_EVEN=1 rounds every format's up to even, A/B): the
// fewest that minimize rounds x (stages per split + kFixed), rounds = CTA waves over the SMs;
// kFixed stands for a CTA's fixed cost (first stage's latency, epilogue) in stages. Limited to
// what fits in `cap` bytes of workspace. TC_QUANT_B32_SPLITS=n forces n (A/B);
// TC_QUANT_B32_MAX_SPLITS=n caps the choice (default 4 at M > 16 for Q4_0, and for Q4_K on three
// warpgroups, else 16; 4 puts O and down in clusters of 4, which fit on the H200 where clusters
// of 8 do not; 4096x4096 M = 32 split 4 ways in clusters measured 14.1 us against 15.8 for 8
// ways with the workspace fixup, at M = 16 12.5 against 11.9).
constexpr int kFixed = 4, kMaxSplits = b32::kMaxSplits;

// W boxes of two stages (256 k of a row per TMA row, Cfg::PAIR), 3 or 4 consumer warpgroups:
// the default for Q4_0 (the one format that measured faster in the 7B step: H200 2026-11-30
// 00:46 UTC 2.723-2.726 against 2.774-2.777 ms; 02:33 UTC, with the K split capped at 4, 2.606
// against 2.692 / 2.688; Q4_K +0.05, Q8_0 +0.83 at 00:46). TC_QUANT_B32_WBOX=pair: every
// format; =stage: one-stage boxes for every format (the earlier default). The splits are then
// even, so that each CTA's boxes start on an even stage (16-byte aligned for Q4_0 / Q8_0).
bool wbox_pair(tc_dtype_t w) {
  const char* v = tc::knobs::get(tc::knobs::kQuantB32Wbox);
  if (v && std::strcmp(v, "pair") == 0) return true;
  if (v && std::strcmp(v, "stage") == 0) return false;
  return w == TC_DTYPE_Q4_0;
}

// A stage's cost relative to four warpgroups' is the stream it brings to the SM, W's rows plus
// X's tile (the kernel reads both at full load at a rate the consumers roughly keep:
// docs/quant.md "Sixth session"); it weighs the stages of a split against kFixed.
Geo geometry(const Args& a, size_t cap) {
  Geo g;
  g.nx = a.M <= 16 ? 16 : 32;
  g.nw = warpgroups(a.w_dtype);
  g.pair = g.nw >= 3 && wbox_pair(a.w_dtype);
  const XConv xconv = xconv_knob();
  const int rows = 64 * g.nw, nks = a.K / b32::kBK;
  g.tiles = (std::max(a.N, 1) + rows - 1) / rows;
  g.x_bytes = xconv == XConv::kHelpers ? 0 : up(size_t(std::max(a.M, 1)) * size_t(a.K) * 2);
  g.cnt_bytes = up(size_t(g.tiles) * 8);
  auto work = [&](int splits) {
    return splits == 1 ? g.x_bytes
                       : g.x_bytes + g.cnt_bytes + up(size_t(splits) * g.tiles * g.nx * rows * 4);
  };
  const char* even_knob = tc::knobs::get(tc::knobs::kQuantB32Even);
  const int even =
      a.w_dtype == TC_DTYPE_Q4_K || g.pair || (even_knob && std::strcmp(even_knob, "1") == 0) ? 2
                                                                                              : 1;
  auto per_of = [&](int splits) { return ((nks + splits - 1) / splits + even - 1) / even * even; };
  const int sms = std::max(1, sm_count());
  int forced = 0;
  if (const char* v = tc::knobs::get(tc::knobs::kQuantB32Splits))
    forced = std::max(0, std::atoi(v));
  // Q4_0 at M > 16: at most 4 (H200 2026-11-30 00:59 UTC, 7B step at batch 32, one process
  // each: 2.671 ms against 2.770 / 2.772 for the default then, whose O and down projections
  // split 8 ways through the workspace; capped at 4 they split in resident clusters of 4; the
  // 00:27 sweep, 4096x4096: M = 32 14.1 us capped against 15.8, but M = 16 12.5 against 11.9).
  // Q4_K at M > 16 too where it runs three warpgroups (02:50 UTC, b32 step 2.631 ms capped
  // against 2.688 / 2.697; with four, TC_QUANT_B32_WG=4, it measured slower capped, 3.480
  // against 3.448 / 3.455, and stays uncapped); Q8_0 was not measured capped.
  const bool capped = a.w_dtype == TC_DTYPE_Q4_0 || (a.w_dtype == TC_DTYPE_Q4_K && g.nw == 3);
  int most = capped && a.M > 16 ? 4 : kMaxSplits;
  if (const char* v = tc::knobs::get(tc::knobs::kQuantB32MaxSplits))
    most = std::clamp(std::atoi(v), 1, kMaxSplits);
  const double wb = a.w_dtype == TC_DTYPE_Q8_0 ? 136 : 72, xb = 2.0 * g.nx * b32::kBK;
  const double stage = (rows * wb + xb) / (256 * wb + xb);
  double best = std::numeric_limits<double>::max();
  for (int s = 1; s <= (forced ? kMaxSplits : most) && s <= std::max(1, nks / 2); ++s) {
    const int per = per_of(s), real = (nks + per - 1) / per;  // splits that are not empty
    if (real != s || work(s) > cap) continue;
    const double rounds = double((g.tiles * s + sms - 1) / sms);
    const double cost = rounds * (per * stage + kFixed);
    if (forced ? s == forced : cost < best) {
      best = cost;
      g.splits = s;
    }
  }
  g.per = per_of(g.splits);
  g.work = work(g.splits);
  g.xin = xconv == XConv::kHelpers || (xconv == XConv::kAuto && g.per <= kXinMaxStages);
  return g;
}

// N * K at or below which the f16 MMA kernel is preferred at M <= 16 (mma_b32_preferred): 0,
// none. H200 22:53 UTC, rotated 4096x4096, M = 16, us: the f16 MMA 12.6 (Q4_0), 14.0 (Q4_K);
// this kernel 13.5, 15.2 with the convert kernel, 11.9, 14.0 with the helpers' X (chosen there
// now, geometry); at M = 32 and on the wider shapes this kernel was faster either way.
constexpr long long kOldBelow = 0;

size_t cap_of(const Args& a) {
  return a.work_bytes > 0 ? a.work_bytes : std::numeric_limits<size_t>::max();
}

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
  TmaMap map_x, map_w;
  std::memset(&map_x, 0, sizeof map_x);  // not read with g.xin
  if ((!g.xin && !tma_encode_3d(&map_x, a.work, 2, uint64_t(a.K), uint64_t(a.M), 1,
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
  b32::Params p{a.M,   a.N,     a.K,     g.tiles,     g.splits,
                g.per, fixup,   g.xin,   cluster,     static_cast<const float*>(a.x),
                a.y,   nullptr, nullptr, next_token()};
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
  if (!g.xin) {
    const uint32_t total8 = uint32_t(size_t(a.M) * a.K / 8);
    const auto* x4 = static_cast<const float4*>(a.x);
    auto* out = reinterpret_cast<uint4*>(work);
    const char* conv = tc::knobs::get(tc::knobs::kQuantB32Convert);  // quant_mma_b32_convert.cuh
    const uint32_t per_cta = b32::kConvThreads * b32::kConvUnroll;
    const cudaError_t e =
        conv && std::strcmp(conv, "resident") == 0
            ? launch_ex(b32::convert_x_resident_kernel,
                        dim3(std::min<uint32_t>((total8 + per_cta - 1) / per_cta,
                                                uint32_t(std::max(1, sm_count())))),
                        dim3(b32::kConvThreads), 0, s, 1, a.pdl, x4, total8, out, C::FMT == kQ4_0)
            : launch_ex(b32::convert_x_kernel, dim3((total8 + 255) / 256), dim3(256), 0, s, 1,
                        a.pdl, x4, total8, out, C::FMT == kQ4_0);
    if (e != cudaSuccess) return cuda_fail(e, "quant b32 convert-X kernel launch");
    pdl = true;  // W streams in while the conversion runs
  }
  const dim3 grid = cluster ? dim3(g.splits, g.tiles) : dim3(g.tiles, g.splits);
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

// mma_b32_supports, which leaves in `g` the geometry it checked (launch_mma_b32 uses it).
bool supports(const Args& a, std::string& why, Geo& g) {
  if (const char* v = tc::knobs::get(tc::knobs::kQuantB32); v && std::strcmp(v, "0") == 0)
    return (why = "TC_QUANT_B32=0", false);
  // sm_90, Q4_0 / Q4_K / Q8_0, X f32, K % 256 == 0, W 16-byte aligned, a TMA encoder: the
  // fused prefill kernel's conditions (whose Q4 decoders and W boxes this kernel shares), asked
  // as Q4_0 for Q8_0 (its rows are whole 16-byte lines at K % 256 == 0 too).
  Args q = a;
  if (a.w_dtype == TC_DTYPE_Q8_0) {
    // TC_QUANT_B32_Q8=0 (A/B): Q8_0 M > 8 back to the int8 MMA kernel (quant_mma_bulk.cu).
    if (const char* v = tc::knobs::get(tc::knobs::kQuantB32Q8); v && std::strcmp(v, "0") == 0)
      return (why = "TC_QUANT_B32_Q8=0", false);
    q.w_dtype = TC_DTYPE_Q4_0;
  }
  if (!prefill_q4_wgmma_supports(q, why) || !bulk_mma_problem_ok(a, why)) return false;
  if (a.N < 1) return (why = "N < 1", false);
  g = geometry(a, cap_of(a));  // M is 1..32 here
  return bulk_mma_buffers_ok(a, a.K >= 256 ? g.work : 0, "the b32 X and partial sums", why);
}

}  // namespace

size_t mma_b32_work_bytes(const Args& a) {
  if (a.M < 1 || a.M > 32 || a.K < 256) return 0;
  return geometry(a, cap_of(a)).work;
}

bool mma_b32_supports(const Args& a, std::string& why) {
  Geo g;
  return supports(a, why, g);
}

bool mma_b32_preferred(const Args& a) {
  // TC_QUANT_B32_MIN_M=m (3..9, default 9): the smallest M this kernel takes (A/B at batch 8
  // against the mma.sync kernels; it computes 16 X rows either way).
  const char* m = tc::knobs::get(tc::knobs::kQuantB32MinM);
  if (a.M < (m && *m ? std::clamp(std::atoi(m), 3, 9) : 9)) return false;
  long long below = kOldBelow;
  if (const char* v = tc::knobs::get(tc::knobs::kQuantB32OldBelow)) below = std::atoll(v);
  return a.M > 16 || (long long)a.N * a.K > below;
}

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
