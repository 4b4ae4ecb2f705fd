// Decode GEMV, M <= 4, 8-bit activations (X given as f32, f16, bf16 or Q8_0 blocks), Q4_0 / Q8_0 /
// Q4_K with K % 256 == 0 (row bytes a multiple of 16): weights streamed by 1-D bulk copies through
// a ring of shared-memory stages (quant_bulk.cuh), decoded from shared memory with conflict-free
// loads, dp4a dots (gemv_quant_bulk_units.cuh; quant_kernels.h: launch_gemv_bulk).
//
// Why: the older GEMVs let each lane load its own 18/34/144-byte block with small loads, so the
// L1/LSU passes, not HBM, set the rate (40-63% of the copy bandwidth). Here one producer lane
// per CTA keeps S stages of R whole rows (<= 32 or 64 KB each: stage_cap; one bulk copy per
// stage, ~150-200 KB)
// in flight, a persistent grid of one CTA per SM walks a contiguous range of row tiles, and 16
// consumer warps take a row pair (or a row) of a stage each, lanes on consecutive units. X is
// quantized per 32 to int8 by the consumer warps while the first stages land, stored per unit
// as 4 int4 chunks [m][chunk][unit] (lanes on consecutive units read consecutive 16 bytes) and
// {d0, d1, sum0, sum1} per unit; at M = 1 with K <= 4096 each lane then keeps the two units it
// dots in registers for all its rows (the X loads were half the shared-memory traffic per row).
// With TC_QUANT_BULK_XCL (by default Q8_0 above K = 4096) the CTAs run in pairs (2-CTA
// clusters), each quantizing half of X's units into both CTAs' shared memory.
// docs/quant.md has the H200 figures and where a launch's time goes.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <tuple>

#include "core/knobs.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemv_quant_bulk_kernel.cuh"
#include "cuda/quant_launch.cuh"

namespace tc::cuda::quant {
namespace {

using namespace bulk_gemv;

constexpr int kMaxM = 4;
constexpr size_t kSmemCap1 = 227 * 1024;  // one CTA per SM: sm_90's per-block maximum
constexpr size_t kSmemCap2 = 113 * 1024;  // two CTAs per SM (the next PDL grid's beside it)

struct Config;

struct Geo {
  int R = 0, RP = 2, S = 0;  // rows per stage and per warp, stages (a multiple of the groups)
  size_t stage = 0, smem = 0;
};

// Configurations (grid: one CTA per SM). Default: 16 consumer warps and up to ~200 KB of
// ring, one CTA per SM; at M = 1 with K <= 4096 each lane holds its two units of X in registers
// (XR = 2). A/B knobs: TC_QUANT_BULK_XREG=0 (X from shared memory per row);
// TC_QUANT_BULK_WARPS=8; TC_QUANT_BULK_CTAS=2: two CTAs per SM (16 warps, <= 113 KB and <= 56
// registers each), so that the next PDL grid's CTA is resident beside this one and streams
// its first stages while this one still runs (measured slower: docs/quant.md).
// Diagnostics: TC_QUANT_BULK_ABLATE (above), TC_QUANT_BULK_TRACE (gemv_quant_bulk_trace.cuh),
// TC_QUANT_BULK_VERBOSE=1 (geometry and occupancy of each shape, once, on stderr).
struct Config {
  int warps, ctas;
  size_t cap;
  bool xreg = false;
  int stages = 8, first = 4, rp = 0;
  size_t stage_cap = 0;  // TC_QUANT_BULK_STAGE_KB in bytes; 0: by shape (stage_cap())
  bool n16 = true;       // TC_QUANT_BULK_DOT=0: the earlier nibble dots (one-CTA M = 1 kernels)
  bool xpairs = true;    // TC_QUANT_BULK_XPAIRS=0: X in rounds of one item per thread
  int pace = 0;          // TC_QUANT_BULK_PACE=d: at most d stages in flight (0: no pacing)
  int pace_kb = 0;       // TC_QUANT_BULK_PACE_KB=n: paced, at least n KB in flight (pace_of)
  bool xcl = false;      // M = 1 with X quantized by halves over 2-CTA clusters ...
  int xcl_k = 0;         // ... where K > xcl_k
};
// A knob's integer value (core/knobs.h: read once per call inside the row's knobs::Scope).
int env_int(knobs::Id knob, int fallback) {
  const char* v = knobs::get(knob);
  return v && v[0] ? std::atoi(v) : fallback;
}
// One CTA per SM: TC_QUANT_BULK_SMEM_KB (ring + X cap, default 227: at K = 11008 the 8
// stages hold a CTA's whole share of the down projection; 200 was the earlier cap, 4 stages
// there), TC_QUANT_BULK_STAGES (most stages, 2..16, default 8), TC_QUANT_BULK_STAGE_KB (the cap
// on a stage's bytes, 4..112; default by shape: stage_cap()),
// TC_QUANT_BULK_FIRST=n (the producer issues n stages, then waits until X is quantized; default 4,
// 0: no wait), TC_QUANT_BULK_RP=1|2 (rows per warp and stage; 0, the default: the busier choice),
// TC_QUANT_BULK_DOT=0 (Config::n16), TC_QUANT_BULK_PACE=d (the producer keeps at most d
// stages in flight: it waits for stage s - d to land, so X's loads, which queue behind the
// copies in flight, wait for d stages at most while the ring still fills during X's
// quantization; FIRST stops the stream there instead; 0: no pacing), TC_QUANT_BULK_PACE_KB=n
// (paced: enough stages in flight for n KB, at least PACE, below the ring's stages; pace_of():
// for Q4_K at M = 1 the 48 KB default raises a smaller PACE, so PACE 1 there needs PACE_KB=0).
// Defaults: M = 1 Q4_0 / Q4_K PACE=2 FIRST=0 (Q4_K: PACE_KB=48, config()) (7B step, H200 22:10 UTC:
// Q4_0 1.221 ms against 1.267 with FIRST=4, Q4_K 1.338 against 1.402; PACE=2 FIRST=4 1.231 / 1.348,
// PACE=3 FIRST=0 1.227 / 1.356; 22:28 UTC: PACE 1 1.471 / 1.570, PACE 4 1.263 / 1.390); elsewhere
// FIRST=4, no pacing (Q8_0 paced: PACE 2 2.143, PACE 3 2.062 against 1.955 ms; M = 2 Q4_0: no
// effect then, paced since the twelfth session's faster dots: config()). On the step FIRST 3, 4, 5
// measured equal within the noise, 0, 2 and 6 slower (20:18-20:23 UTC).
Config one_cta(int warps, bool paced) {
  Config c{warps, 1, kSmemCap1};
  const int kb = env_int(knobs::kQuantBulkSmemKb, 227);
  c.cap = size_t(std::clamp(kb, 64, 227)) * 1024;
  c.stages = std::clamp(env_int(knobs::kQuantBulkStages, 8), 2, kMaxStages);
  const int stage_kb = env_int(knobs::kQuantBulkStageKb, 0);
  c.stage_cap = stage_kb > 0 ? size_t(std::clamp(stage_kb, 4, 112)) * 1024 : 0;
  c.first = std::max(env_int(knobs::kQuantBulkFirst, paced ? 0 : 4), 0);
  c.rp = env_int(knobs::kQuantBulkRp, 0);
  c.n16 = env_int(knobs::kQuantBulkDot, 1) != 0;
  c.pace = std::max(env_int(knobs::kQuantBulkPace, paced ? 2 : 0), 0);
  c.pace_kb = std::max(env_int(knobs::kQuantBulkPaceKb, 0), 0);
  return c;
}
// TC_QUANT_BULK_XPAIRS=0 (A/B): X quantized in rounds of one item per thread, as before the
// fifth session (quantize_x: two items a thread where X has more items than threads).
Config config(int M, tc_dtype_t w) {
  const bool xpairs = env_int(knobs::kQuantBulkXpairs, 1) != 0;
  if (M > 1) {  // M > 1: registers for X
    Config c = one_cta(8, false);
    c.xpairs = xpairs;
    // M = 2, Q4_0 / Q4_K: PACE=2 with FIRST=4 (7B step, X f16, H200 2026-11-30 10:57 UTC, two
    // runs each: Q4_0 1.535 / 1.535 ms against 1.603 / 1.612 unpaced, PACE 3 1.576, PACE 2
    // FIRST 0 1.562; Q4_K 1.609 / 1.610 against 1.667 / 1.669; Q8_0 slower paced: 2.248
    // against 2.130-2.135). Unmeasured at M = 3, 4 (launch_decode only): unpaced there.
    if (M == 2 && w != TC_DTYPE_Q8_0) c.pace = std::max(env_int(knobs::kQuantBulkPace, 2), 0);
    return c;
  }
  if (env_int(knobs::kQuantBulkCtas, 1) == 2) {  // as measured: no wait for X
    Config c{16, 2, kSmemCap2};
    c.first = 0;
    c.xpairs = xpairs;
    // Paced, it loses too (7B step, H200 2026-11-30 04:18 UTC, Q4_0 / Q4_K / Q8_0: PACE=2
    // 1.418 / 1.547 / 2.266 ms, PACE=3 1.446, against 1.196 / 1.318 / 1.899 one CTA per SM;
    // 8 consumer warps of up to 112 registers with X in registers, 04:27: 1.340 / 1.556 /
    // 2.234): the next grid's CTA streams early, but its wait for X and X's quantization stay.
    c.pace = std::max(env_int(knobs::kQuantBulkPace, 0), 0);
    return c;
  }
  Config c = one_cta(env_int(knobs::kQuantBulkWarps, 16) == 8 ? 8 : 16, w != TC_DTYPE_Q8_0);
  c.xreg = c.warps == 16 && env_int(knobs::kQuantBulkXreg, 1) == 1;
  // Q4_K: at least 48 KB in flight (3 of its 18 KB stages at K = 4096, 2 of its 24 KB stages at
  // K = 11008; small K, e.g. 256, gets S - 1 stages: not measured). 7B step,
  // H200 2026-11-30 10:57 UTC, two runs each, ms: X f16 1.154 / 1.152 against 1.163 / 1.162
  // (PACE=2), X f32 1.203 / 1.208 against 1.217 / 1.220; 64 KB 1.168-1.170, 96 KB 1.208-1.210.
  // Q4_0 (stages of 16 rows on its long shapes) even at 48 KB, slower at 64 and 96 KB (O and
  // down lose 0.3-0.5 us a launch: X's loads wait behind more bytes).
  if (w == TC_DTYPE_Q4_K) c.pace_kb = std::max(env_int(knobs::kQuantBulkPaceKb, 48), 0);
  c.xpairs = xpairs;
  // X by halves over 2-CTA clusters (TC_QUANT_BULK_XCL=1|2, TC_QUANT_BULK_XCL_K=k: where K > k):
  // by default Q8_0 above K = 4096 (the down projection). 7B step, H200 2026-11-30 04:21-04:27
  // UTC: Q8_0 1.896-1.902 ms against 1.925; Q4_0 / Q4_K 1.212 / 1.329 against 1.207 / 1.330; at
  // every K (XCL_K=0) Q4_0 1.241, Q4_K 1.386, Q8_0 1.947 (docs/quant.md).
  const int xcl = env_int(knobs::kQuantBulkXcl, w == TC_DTYPE_Q8_0 ? 2 : 1);
  c.xcl = c.warps == 16 && xcl == 2;
  c.xcl_k = env_int(knobs::kQuantBulkXclK, 4096);
  // Q8_0: single rows per warp by default (TC_QUANT_BULK_RP=1: 4 warps on a stage of 4 rows at
  // K = 4096 instead of 2 pairs). 7B step with X f16, H200 2026-11-30 06:21 UTC: Q8_0 1.912 /
  // 1.914 ms against 1.928 / 1.928; Q4_0 1.236-1.239 against 1.178-1.185, Q4_K 1.324-1.326
  // against 1.275-1.279 (they keep the busier choice, pairs).
  if (w == TC_DTYPE_Q8_0 && c.rp == 0) c.rp = 1;
  return c;
}

// X's kind for the kernel: f32 / f16 / bf16, or Q8_0 blocks (kXQ8: the codes are used as they
// are, X's quantization is skipped; the loads are 34 bytes per 32 values instead of 64 / 128).
int bulk_x_kind(const Args& a) {
  return a.x_dtype == TC_DTYPE_Q8_0 ? kXQ8 : x_kind(a.x_dtype);
}

// X in registers (the XR = 2 kernels): M = 1, K <= 4096 (at most 2 units per lane).
bool use_xreg(const Args& a, const Config& c) {
  return c.xreg && a.M == 1 && a.K / 64 <= 64;
}

// The most bytes of a stage (R doubles while two rows more fit): 32 KB, and 64 KB for Q4_0's long
// batch-1 shapes (one CTA per SM, K <= 4096, N >= 12288): 16 rows of 2304 bytes a stage instead
// of 8, two groups of 8 warps instead of 4 of 4, and with PACE = 2 twice the bytes in flight.
// `tc bench decode --per-shape`, X f16, H200 2026-11-30 09:22 / 09:29 UTC, us a launch, 64 / 32
// KB: Q4_0 22016x4096 13.03-13.01 / 13.98, 12288x4096 8.01-8.00 / 8.39, but 4096x4096 4.87 / 4.41
// and 4096x11008 10.07 / 9.18 (where X's round trip, behind the bytes in flight, weighs more);
// Q4_K 22016x4096 14.14-14.17 / 14.57-14.60, 12288x4096 9.13 / 8.98; Q8_0 (unpaced) even. In the
// 7B step (09:29 UTC, two processes, ms, 64 KB on the long shapes / 32 KB everywhere): Q4_0 X f16
// 1.165-1.166 / 1.182-1.183, X f32 1.212-1.214 / 1.222-1.223; Q4_K X f16 1.278-1.285 /
// 1.278-1.280, X f32 1.322-1.329 / 1.317-1.319, so Q4_K keeps 32 KB. TC_QUANT_BULK_STAGE_KB=n
// forces n KB for every shape (A/B).
size_t stage_cap(const Args& a, const Config& c) {
  if (c.stage_cap > 0) return c.stage_cap;
  const bool wide =
      a.M == 1 && c.ctas == 1 && a.w_dtype == TC_DTYPE_Q4_0 && a.K <= 4096 && a.N >= 12288;
  return size_t(wide ? 64 : 32) * 1024;
}

// The stages in flight of a paced stream: Config::pace, or with pace_kb at least the stages
// for pace_kb KB (small stages, e.g. Q4_K's 8 rows of 2304 bytes, then keep about as many bytes
// in flight as 16-row stages at PACE 2), but fewer than the ring's S stages: the byte rule never
// turns pacing off (a pace >= S is unpaced in the kernel).
int pace_of(const Config& c, size_t stage, int S) {
  if (c.pace <= 0 || c.pace_kb <= 0) return c.pace;
  const int want = int((size_t(c.pace_kb) * 1024 + stage - 1) / stage);
  return std::max(c.pace, std::min(want, S - 1));
}

Geo geometry(const Args& a, int mt, const Config& c) {
  Geo g;
  const size_t rb = w_row_bytes(a);
  g.R = 1;
  const size_t cap = stage_cap(a, c);
  while (g.R < 32 && 2 * g.R * rb <= cap) g.R *= 2;
  g.stage = g.R * rb;
  const size_t x = size_t(mt) * (size_t(a.K) + size_t(a.K) / 4);
  const size_t left = c.cap > kHead + x ? c.cap - kHead - x : 0;
  const int S = int(std::min<size_t>(size_t(c.stages), left / g.stage));
  // Row pairs, unless single rows keep more warps busy (wide rows: few rows, few stages).
  int best = -1;
  for (int rp : {2, 1}) {
    if (S <= 0) break;
    if (c.rp == 1 || c.rp == 2) rp = c.rp;
    const int ng = stage_groups(g.R, rp, c.warps, S);
    const int busy = stage_warps(g.R, rp, c.warps) * ng;
    if (busy > best) {
      best = busy;
      g.RP = rp;
      g.S = S - S % ng;
    }
  }
  g.smem = kHead + x + g.S * g.stage;
  return g;
}

// X by halves over 2-CTA clusters (Config::xcl): M = 1, one-CTA nibble-dot configurations, at
// least one row tile per CTA of a cluster (every grid has whole clusters).
bool use_xcl(const Args& a, const Config& c) {
  if (a.M != 1 || c.ctas != 1 || !c.xcl || !c.n16 || a.K <= c.xcl_k) return false;
  const Geo g = geometry(a, 1, c);
  return g.R > 0 && (a.N + g.R - 1) / g.R >= 2;
}

// Once per kernel and device: the dynamic shared memory limit and the carveout (all shared
// memory, so that two CTAs of 113 KB fit on an SM).
tc_status_t prepare(const void* kernel, bool two_ctas) {
  static std::mutex mu;
  static std::set<std::pair<const void*, int>> done;
  int dev = 0;
  cudaGetDevice(&dev);
  std::lock_guard lock(mu);
  if (done.count({kernel, dev})) return TC_SUCCESS;
  if (const tc_status_t st = allow_smem(kernel, kSmemCap1); st != TC_SUCCESS) return st;
  const cudaError_t e =
      !two_ctas ? cudaSuccess
                : cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       cudaSharedmemCarveoutMaxShared);
  if (e != cudaSuccess) return cuda_fail(e, "quant bulk gemv: cudaFuncSetAttribute (carveout)");
  done.insert({kernel, dev});
  return TC_SUCCESS;
}

template <int FMT, int MT, int CW, int MINB, int XR = 0, bool N16 = true, int XC = 1>
tc_status_t launch_fmt(const Args& a, const Config& c, cudaStream_t s) {
  auto* kernel = bulk_gemv_kernel<FMT, MT, CW, MINB, XR, N16, XC>;
  const Geo g = geometry(a, MT, c);
  // Prepared on every device already: no cudaGetDevice, lock or set lookup per launch.
  static std::atomic<unsigned long long> prepared{0};  // bit per device
  if (!every_device(prepared.load(std::memory_order_acquire))) {
    if (const tc_status_t st = prepare(reinterpret_cast<const void*>(kernel), MINB == 2);
        st != TC_SUCCESS)
      return st;
    int dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess)
      prepared.fetch_or(1ull << (dev & 63), std::memory_order_acq_rel);
  }
  const int64_t tiles = (int64_t(a.N) + g.R - 1) / g.R;
  const int ablate = env_int(knobs::kQuantBulkAblate, kFull);
  int grid = int(std::min<int64_t>(tiles, sm_count()));
  // XC: resident_clusters is a locked, cached lookup per launch (cudaGetDevice, a mutex, a map),
  // unlike the prepared bits above; graph replays do not pay it.
  if constexpr (XC > 1)  // whole clusters, all resident at once (prepare: the opt-in is set)
    grid = XC * std::min(grid / XC, resident_clusters(reinterpret_cast<const void*>(kernel), XC,
                                                      kThreadsOf<CW>, kSmemCap1));
  unsigned long long* trace = bulk_trace::slot(a.N, a.K, grid, FMT);
  if (env_int(knobs::kQuantBulkVerbose, 0) == 1) {
    static std::mutex mu;
    static std::set<std::tuple<const void*, int, int>> seen;
    std::lock_guard lock(mu);
    if (seen.insert({reinterpret_cast<const void*>(kernel), a.N, a.K}).second)
      std::fprintf(
          stderr,
          "bulk gemv fmt %d M %d N %d K %d: warps %d ctas %d xr %d n16 %d R %d RP %d S %d "
          "first %d stage %zu smem %zu, %d CTAs/SM fit, cluster %d, grid %d\n",
          FMT, a.M, a.N, a.K, CW, MINB, XR, int(N16), g.R, g.RP, g.S, c.first, g.stage, g.smem,
          blocks_per_sm(reinterpret_cast<const void*>(kernel), kThreadsOf<CW>, g.smem), XC, grid);
  }
  const cudaError_t e =
      launch_ex(kernel, dim3(unsigned(grid)), dim3(kThreadsOf<CW>), g.smem, s, XC, a.pdl,
                static_cast<const uint8_t*>(a.w), a.x, bulk_x_kind(a), a.y, a.M, a.N, a.K,
                uint32_t(w_row_bytes(a)), g.R, g.RP, g.S, c.first > 0 ? c.first : -1,
                pace_of(c, g.stage, g.S), ablate, int(c.xpairs), trace);
  return e == cudaSuccess ? launched("quant bulk gemv kernel launch")
                          : cuda_fail(e, "quant bulk gemv kernel launch");
}

template <int FMT>
tc_status_t launch_m(const Args& a, cudaStream_t s) {
  const Config c = config(a.M, a.w_dtype);
  if (a.M == 1) {
    if (c.ctas == 2) return launch_fmt<FMT, 1, 16, 2>(a, c, s);
    if (use_xcl(a, c))
      return use_xreg(a, c) ? launch_fmt<FMT, 1, 16, 1, 2, true, 2>(a, c, s)
                            : launch_fmt<FMT, 1, 16, 1, 0, true, 2>(a, c, s);
    if (use_xreg(a, c))
      return c.n16 ? launch_fmt<FMT, 1, 16, 1, 2>(a, c, s)
                   : launch_fmt<FMT, 1, 16, 1, 2, false>(a, c, s);
    if (c.warps == 8) return launch_fmt<FMT, 1, 8, 1>(a, c, s);
    return c.n16 ? launch_fmt<FMT, 1, 16, 1>(a, c, s)
                 : launch_fmt<FMT, 1, 16, 1, 0, false>(a, c, s);
  }
  return a.M == 2 ? launch_fmt<FMT, 2, 8, 1>(a, c, s) : launch_fmt<FMT, 4, 8, 1>(a, c, s);
}

// The geometry launch_m's kernel instance takes for `a` (X rows MT = 1, 2, or 4 for M 3..4).
Geo launch_geometry(const Args& a, const Config& c) {
  return geometry(a, a.M <= 2 ? a.M : kMaxM, c);
}

}  // namespace

bool gemv_bulk_supports(const Args& a, std::string& why) {
  if (a.x_dtype != TC_DTYPE_Q8_0 && !x_kind_ok(a, why)) return false;
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q8_0 && a.w_dtype != TC_DTYPE_Q4_K)
    return (why = "formats Q4_0, Q8_0, Q4_K only", false);
  if (a.M < 1 || a.M > kMaxM) return (why = "M > 4", false);
  if (a.K % 256 != 0) return (why = "K % 256 != 0 (rows not a multiple of 16 bytes)", false);
  if (launch_geometry(a, config(a.M, a.w_dtype)).S < 2)
    return (why = "X and two stages do not fit in shared memory", false);
  const auto align = reinterpret_cast<uintptr_t>(a.w) | reinterpret_cast<uintptr_t>(a.x);
  if (align % 16 != 0) return (why = "W or X not 16-byte aligned", false);
  return true;
}

int gemv_bulk_cluster(const Args& a) {
  return use_xcl(a, config(a.M, a.w_dtype)) ? 2 : 1;
}

int gemv_bulk_stage_rows(const Args& a) {
  return launch_geometry(a, config(a.M, a.w_dtype)).R;
}

int gemv_bulk_pace(const Args& a) {
  const Config c = config(a.M, a.w_dtype);
  const Geo g = launch_geometry(a, c);
  return pace_of(c, g.stage, g.S);
}

tc_status_t launch_gemv_bulk(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  return with_format(a.w_dtype, [&](auto f) { return launch_m<decltype(f)::value>(a, s); });
}

}  // namespace tc::cuda::quant
