// Batched decode wgmma kernel, host side, the plan of a call: the consumer warpgroups, the X
// tile, the K split, the workspace and who converts X (Geo, quant_mma_b32_geometry.cuh), from
// the problem, the SM count and the TC_QUANT_B32_* knobs that shape it, and the public queries
// built on it (mma_b32_supports, mma_b32_work_bytes, mma_b32_preferred). The launch is
// quant_mma_b32.cu, the one file that instantiates the kernel; this one includes the kernel
// header for its constants only (b32::kBK, b32::kMaxSplits).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/knobs.h"
#include "cuda/quant_launch.cuh"
#include "cuda/quant_mma_b32.h"
#include "cuda/quant_mma_b32_geometry.cuh"
#include "cuda/quant_mma_b32_kernel.cuh"
#include "cuda/quant_mma_f16_units.cuh"

namespace tc::cuda::quant {
namespace {

using b32::Geo;

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
// Two where K is long and rows are few (K > 8192, N <= 8192, the 7B down projection): 4096 rows
// are 32 whole 128-row tiles split 4 ways in resident clusters of 4, where 192-row tiles leave a
// third-full 22nd tile and split 6 ways through the workspace (clusters of 6 do not all fit).
// `tc bench decode --per-shape`, H200 2026-11-30 07:50-08:05 UTC, X f16, 4096x11008, us a
// launch, two / the default: Q4_0 M 8 15.36 / 15.94, 16 15.42 / 16.15, 32 17.31 / 18.83; Q4_K
// M 8 16.87 / 17.85, 16 17.21 / 18.10, 32 18.64 / 20.88; Q8_0 (default four) M 8 19.35 / 20.28,
// 16 19.39 / 21.14. Elsewhere two lost: gate+up 22016x4096 1.4-1.7x (172 tiles, two waves).
// Fitted on the 7B shapes (others, e.g. 8192x28672, not measured).
// In the step (08:07 UTC, ms, two / three or four, two processes each, X f16): Q4_K b16 2.334-
// 2.336 / 2.340-2.360, b32 2.446-2.459 / 2.478-2.483; Q8_0 b16 2.949 / 2.995-3.001, b32
// 3.261-3.275 / 3.352-3.353; but Q4_0 b16 2.071-2.083 / 2.062-2.063, b32 2.279-2.287 / 2.264-
// 2.284 (the per-shape gain did not carry into the step), so Q4_0 keeps three.
int warpgroups(const Args& a) {
  const char* v = tc::knobs::get(tc::knobs::kQuantB32Wg);
  const int forced =
      v && (std::strcmp(v, "2") == 0 || std::strcmp(v, "3") == 0 || std::strcmp(v, "4") == 0)
          ? *v - '0'
          : 0;
  if (forced == 0 && a.w_dtype != TC_DTYPE_Q4_0 && a.K > 8192 && a.N <= 8192) return 2;
  if (a.w_dtype == TC_DTYPE_Q8_0) return forced == 2 ? 2 : 4;
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
// Q4_K takes pairs at M <= 8 (the batch-8 step's gate+up projection: H200 2026-11-30 11:58
// UTC, 7B step X f16, two alternations, ms: batch 8 2.293-2.297 against 2.329-2.331, batch 32
// 2.463-2.468 against 2.460-2.462, so M > 8 keeps one-stage boxes; M 9..16 not measured).
bool wbox_pair(const Args& a) {
  const char* v = tc::knobs::get(tc::knobs::kQuantB32Wbox);
  if (v && std::strcmp(v, "pair") == 0) return true;
  if (v && std::strcmp(v, "stage") == 0) return false;
  return a.w_dtype == TC_DTYPE_Q4_0 || (a.w_dtype == TC_DTYPE_Q4_K && a.M <= 8);
}

// A stage's cost relative to four warpgroups' is the stream it brings to the SM, W's rows plus
// X's tile (the kernel reads both at full load at a rate the consumers roughly keep:
// docs/quant.md "Sixth session"); it weighs the stages of a split against kFixed.
Geo geometry(const Args& a, size_t cap) {
  Geo g;
  g.nx = a.M <= 16 ? 16 : 32;
  g.nw = warpgroups(a);
  g.pair = g.nw >= 3 && wbox_pair(a);
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

// At M = 3..8 both batched kernels serve; which one is faster depends mostly on the shape class
// (`tc bench decode --per-shape`; first fitted on H200 2026-11-30 07:50 UTC, the 7B shapes, us a
// launch, this kernel / the mma.sync X-in-registers kernel, M = 8, X f32 then X f16; the same order
// at M = 4 and 6 with X f16, 08:03 UTC, e.g. Q4_0 22016x4096 21.26 / 24.62, 4096x4096 9.74 / 8.31,
// Q4_K 22016x4096 25.14 / 27.16, 4096x11008 17.68 / 18.86, Q8_0 4096x11008 19.98 / 22.31 at M = 4;
// M = 3 was not measured):
//   Q4_0 12288x4096 14.97 / 15.08, 14.93 / 15.32; 4096x4096 10.04 / 8.22, 9.93 / 8.53;
//        22016x4096 21.68 / 25.00, 21.59 / 25.03; 4096x11008 15.96 / 15.80, 15.87 / 15.94
//   Q4_K 12288x4096 18.10 / 16.52, 16.72 / 16.80; 4096x4096 11.72 / 9.11, 10.62 / 9.46;
//        22016x4096 26.75 / 27.57, 25.11 / 27.49; 4096x11008 19.06 / 19.05, 17.85 / 19.12
//   Q8_0 12288x4096 21.52 / 20.54, 20.96 / 20.37; 4096x4096 12.02 / 10.13, 11.97 / 10.31;
//        22016x4096 38.15 / 32.65, 35.73 / 32.68; 4096x11008 21.65 / 22.99, 20.28 / 22.72
// Per shape alone, after the mma.sync kernel's X came by bulk copies (TC_QUANT_F16_XTMA, 1-3 us a
// launch less; H200 2026-11-30 15:05 UTC, us a launch, this kernel / the mma.sync kernel, M = 4
// then M = 8), the mma.sync kernel looked faster on more shapes, e.g. Q4_0 X f16 4096x11008
// 15.40 / 13.90, 15.50 / 14.38, Q8_0 X f16 4096x11008 19.32 / 18.62, 19.42 / 19.16; but in the
// step those moves lost (15:15 UTC, ms, batch 4 / 8: Q4_0 X f16 1.916 / 1.936 -> 1.966 / 2.057,
// Q8_0 X f16 2.381 / 2.453 -> 2.448 / 2.527): a shape timed alone repeats one kernel, whose next
// launch starts its weight stream under the previous one's tail (PDL); in the step the previous
// kernel is another. So the classes are chosen on the step (TC_QUANT_B32_SMALL below).
// Chosen on the step (15:25 UTC, TC_QUANT_B32_SMALL over the 8 class sets, two rounds, ms at batch
// 4 / 8): the small shapes (N K <= 4096^2: one short pass or two per SM) go to the mma.sync
// kernel, whose fixed cost per launch is lower; Q4_0 takes this kernel everywhere else (its
// 192-row tiles fill the SMs; X f16 1.905-1.911 / 1.920-1.926, the best set or within 0.01 ms of
// it; X f32 2.001-2.008 / 2.055-2.060, the best); Q4_K and Q8_0 only where K is long (K > 8192; the
// mma.sync kernel splits K = 11008 over 2-CTA clusters): Q4_K X f16 2.157-2.158 / 2.210-2.217
// against 2.215-2.218 / 2.245-2.253 with the wide shapes too, X f32 2.218-2.226 / 2.318
// against 2.372-2.379 / 2.316-2.323 (none at M 4, long K at M 8); Q8_0 X f16 2.385-2.388
// / 2.460-2.464, the best, X f32 2.485-2.494 / 2.627-2.634 (within 0.01 ms of the best). Fitted on
// the 7B shapes; other models' shapes (e.g. 4096x14336, 8192x28672) were not measured.
//
// TC_QUANT_B32_SMALL=classes (A/B, M 3..8, every format): this kernel takes exactly the listed
// classes of N K > 4096^2: 'w' wide (N >= 16384, K <= 8192), 'k' long K (K > 8192), 'm' the
// others; any other character (e.g. "-") alone: none.
bool b32_at_small_m(const Args& a) {
  const long long nk = (long long)a.N * a.K;
  if (nk <= 4096LL * 4096) return false;
  const bool wide = a.N >= 16384 && a.K <= 8192, longk = a.K > 8192;
  if (const char* v = tc::knobs::get(tc::knobs::kQuantB32Small); v && *v)
    return std::strchr(v, wide ? 'w' : longk ? 'k' : 'm') != nullptr;
  // Q4_K with bf16 X (not measured in the step) stays on the mma.sync kernel, which reads it
  // natively, as before the refit.
  const bool q4k_bf16 = a.w_dtype == TC_DTYPE_Q4_K && a.x_dtype == TC_DTYPE_BF16;
  return a.w_dtype == TC_DTYPE_Q4_0 || (longk && !q4k_bf16);
}

// N * K at or below which the f16 MMA kernel is preferred at M <= 16 (mma_b32_preferred): 0,
// none. H200 22:53 UTC, rotated 4096x4096, M = 16, us: the f16 MMA 12.6 (Q4_0), 14.0 (Q4_K);
// this kernel 13.5, 15.2 with the convert kernel, 11.9, 14.0 with the helpers' X (chosen there
// now, geometry); at M = 32 and on the wider shapes this kernel was faster either way.
constexpr long long kOldBelow = 0;

size_t cap_of(const Args& a) {
  return a.work_bytes > 0 ? a.work_bytes : std::numeric_limits<size_t>::max();
}

}  // namespace

// mma_b32_supports, which leaves in `g` the geometry it checked (launch_mma_b32 uses it).
bool b32::supports(const Args& a, std::string& why, Geo& g) {
  if (const char* v = tc::knobs::get(tc::knobs::kQuantB32); v && std::strcmp(v, "0") == 0)
    return (why = "TC_QUANT_B32=0", false);
  // X f32, f16 or bf16 (read as given: Params::xk), checked first so that the reason names it
  // on any machine.
  if (!x_kind_ok(a, why)) return false;
  // sm_90, Q4_0 / Q4_K / Q8_0, K % 256 == 0, W 16-byte aligned, a TMA encoder: the fused
  // prefill kernel's conditions (whose Q4 decoders and W boxes this kernel shares), asked as
  // Q4_0 for Q8_0 (its rows are whole 16-byte lines at K % 256 == 0 too) and for f32 X.
  Args q = a;
  q.x_dtype = TC_DTYPE_F32;
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

size_t mma_b32_work_bytes(const Args& a) {
  if (a.M < 1 || a.M > 32 || a.K < 256) return 0;
  return geometry(a, cap_of(a)).work;
}

bool mma_b32_supports(const Args& a, std::string& why) {
  Geo g;
  return supports(a, why, g);
}

bool mma_b32_preferred(const Args& a) {
  // TC_QUANT_B32_MIN_M=m (3..9): the smallest M this kernel takes, for every shape (it computes
  // 16 X rows either way). By default M >= 9, and at M 3..8 per shape class (b32_at_small_m;
  // before, Q4_0 took it from M = 8 everywhere, Q4_K / Q8_0 from M = 9: 7B step at batch 8 in the
  // seventh session, Q4_0 2.020-2.026 ms against 2.095-2.104, Q4_K / Q8_0 2.429 / 3.076 against
  // 2.325 / 2.769).
  const char* m = tc::knobs::get(tc::knobs::kQuantB32MinM);
  if (m && *m) {
    if (a.M < std::clamp(std::atoi(m), 3, 9)) return false;
  } else if (a.M < 3 || (a.M <= 8 && !b32_at_small_m(a))) {  // M <= 2: the bulk GEMV
    return false;
  }
  long long below = kOldBelow;
  if (const char* v = tc::knobs::get(tc::knobs::kQuantB32OldBelow)) below = std::atoll(v);
  return a.M > 16 || (long long)a.N * a.K > below;
}

}  // namespace tc::cuda::quant
