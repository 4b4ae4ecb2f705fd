// Decode GEMV, M <= 4, 8-bit activations, Q4_0 / Q8_0 / Q4_K with K % 256 == 0 (row bytes a
// multiple of 16): weights streamed by 1-D bulk copies through a ring of shared-memory stages
// (quant_bulk.cuh), decoded from shared memory with conflict-free loads, dp4a dots
// (gemv_quant_bulk_units.cuh; quant_kernels.h: launch_gemv_bulk).
//
// Why: the older GEMVs let each lane load its own 18/34/144-byte block with small loads, so the
// L1/LSU passes, not HBM, set the rate (40-63% of the copy bandwidth). Here one producer lane
// per CTA keeps S stages of R whole rows (<= 32 KB each, one bulk copy per stage, ~150-200 KB)
// in flight, a persistent grid of one CTA per SM walks a contiguous range of row tiles, and 16
// consumer warps take a row pair (or a row) of a stage each, lanes on consecutive units. X is
// quantized per 32 to int8 by the consumer warps while the first stages land, stored per unit
// as 4 int4 chunks [m][chunk][unit] (lanes on consecutive units read consecutive 16 bytes) and
// {d0, d1, sum0, sum1} per unit; at M = 1 with K <= 4096 each lane then keeps the two units it
// dots in registers for all its rows (the X loads were half the shared-memory traffic per row).
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
#include "cuda/gemv_quant_bulk_trace.cuh"
#include "cuda/gemv_quant_bulk_units.cuh"
#include "cuda/quant_bulk.cuh"
#include "cuda/quant_launch.cuh"

namespace tc::cuda::quant {
namespace {

using namespace bulk_gemv;
using bulk_trace::kTraceWords;
using bulk_trace::now_ns;

// Consumer warps (8 or 16: Config below); one more warp is the producer.
template <int CW>
constexpr int kThreadsOf = (CW + 1) * 32;
constexpr int kMaxStages = 16;  // barrier slots; Config::stages (default 8) is the ring's cap
constexpr int kMaxM = 4;
constexpr size_t kSmemCap1 = 227 * 1024;  // one CTA per SM: sm_90's per-block maximum
constexpr size_t kSmemCap2 = 113 * 1024;  // two CTAs per SM (the next PDL grid's beside it)
constexpr size_t kHead = 384;             // the barriers: full, empty, xready
constexpr size_t kStageCap = 32 * 1024;   // bytes of one stage (R rows) at most

struct Config;

struct Geo {
  int R = 0, RP = 2, S = 0;  // rows per stage and per warp, stages (a multiple of the groups)
  size_t stage = 0, smem = 0;
};

// Warps consuming one stage (RP = 1 or 2 rows each: a pair shares the X loads) and groups of
// them taking turns on stages. A group waits on a slot's `full` barrier two uses ahead only if
// the slot's previous use belongs to another group, and parity waits cannot tell phases two
// apart: so S is a multiple of the number of groups (a slot's previous use is the group's own).
__host__ __device__ inline int stage_warps(int R, int RP, int CW) {
  return min((R + RP - 1) / RP, CW);
}
__host__ __device__ inline int stage_groups(int R, int RP, int CW, int S) {
  return min(CW / stage_warps(R, RP, CW), S);
}

// Diagnostics (TC_QUANT_BULK_ABLATE, Y not valid): 1 the launch chain alone (same resources,
// no work), 2 the weight stream alone (no X, no dots), 3 no X quantization.
enum Ablate { kFull = 0, kChainOnly = 1, kStreamOnly = 2, kNoXQuant = 3 };

// XR > 0: each lane keeps the XR units of X it dots (u = lane + 32 j, U <= 32 XR) in registers
// for all its rows, instead of loading them from shared memory per row (M = 1). N16: the
// nibble dots of unit_dot (gemv_quant_bulk_units.cuh); false only for the A/B knob.
template <int FMT, int MT, int kCW, int kMinBlocks, int XR, bool N16 = true>
__global__ void __launch_bounds__(kThreadsOf<kCW>, kMinBlocks)
    bulk_gemv_kernel(const uint8_t* __restrict__ W, const float* __restrict__ X,
                     float* __restrict__ Y, int M, int N, int K, uint32_t rb, int R, int RP, int S,
                     int first, int pace, int ablate, int xpairs, unsigned long long* trace) {
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  uint64_t* xready = empty + kMaxStages;  // X quantized (first > 0: the producer waits on it)
  const int U = K / 64;
  int4* xq = reinterpret_cast<int4*>(smem + kHead);  // [MT][4][U]
  int4* xm = xq + size_t(MT) * 4 * U;                // [MT][U]
  uint8_t* ring = reinterpret_cast<uint8_t*>(xm + size_t(MT) * U);
  const size_t stage = size_t(R) * rb;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int RW = stage_warps(R, RP, kCW), NG = stage_groups(R, RP, kCW, S);  // S % NG == 0
  const int64_t tiles = (int64_t(N) + R - 1) / R;
  const int t0 = int(tiles * blockIdx.x / gridDim.x);
  const int my = int(tiles * (blockIdx.x + 1) / gridDim.x) - t0;
  unsigned long long* tr = trace ? trace + size_t(blockIdx.x) * kTraceWords : nullptr;
  if (tr && threadIdx.x == 0) {
    tr[0] = now_ns();
    tr[6] = bulk_trace::smid() | (uint64_t(my) << 32);
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      bulk::bar_init(&full[s], 1);
      bulk::bar_init(&empty[s], uint32_t(RW));
    }
    bulk::bar_init(xready, 1);
    bulk::fence_barrier_init();
  }
  __syncthreads();
  bulk::grid_launch_dependents();
  if (ablate == kChainOnly) {
    bulk::grid_wait();
    return;
  }
  if (warp == kCW) {  // producer: W is never written by the previous grid (launch_gemv_bulk)
    if (lane == 0) {
      for (int s = 0; s < my; ++s) {
        const int slot = s % S;
        if (s >= S) bulk::bar_wait(&empty[slot], uint32_t((s / S - 1) & 1));
        if (s == first) bulk::bar_wait(xready, 0);  // the rest once X's loads are done
        // 0 < pace < S: at most `pace` stages in flight (stage s - pace has landed). Its slot
        // cannot have completed a later phase: stage s - pace + S > s is not issued yet.
        if (pace > 0 && pace < S && s >= pace)
          bulk::bar_wait(&full[(s - pace) % S], uint32_t(((s - pace) / S) & 1));
        const int64_t row0 = int64_t(t0 + s) * R;
        const uint32_t bytes = uint32_t(N - row0 < R ? N - row0 : R) * rb;
        bulk::bar_expect_tx(&full[slot], bytes);
        bulk::copy(ring + slot * stage, W + row0 * rb, bytes, &full[slot]);
      }
      if (tr) tr[5] = now_ns();
    }
    return;
  }
  bulk::grid_wait();  // X and Y belong to the previous grid until it is done
  if (tr && threadIdx.x == 0) tr[1] = now_ns();
  if (ablate != kStreamOnly && ablate != kNoXQuant)
    quantize_x(X, M, K, U, kCW * 32, xq, xm, xpairs != 0);
  bulk::sync_consumers(kCW * 32);
  if (threadIdx.x == 0) bulk::bar_arrive(xready);
  if (tr && threadIdx.x == 0) tr[2] = now_ns();
  unsigned long long last_full = 0;
  const int group = warp / RW, wr = warp % RW;
  if (group >= NG) return;  // fewer stages than groups: these warps only quantized X
  XUnit<MT> xr[XR > 0 ? XR : 1];
  if constexpr (XR > 0) {
#pragma unroll
    for (int j = 0; j < XR; ++j)
      if (lane + 32 * j < U) load_x<FMT, MT, N16>(xr[j], lane + 32 * j, U, M, xq, xm);
  }
  for (int s = group; s < my; s += NG) {
    const int slot = s % S;
    bulk::bar_wait(&full[slot], uint32_t((s / S) & 1));
    if (tr) {
      last_full = now_ns();
      if (threadIdx.x == 0 && s == 0) tr[3] = last_full;
    }
    if (ablate == kStreamOnly) {
      __syncwarp();
      if (lane == 0) bulk::bar_arrive(&empty[slot]);
      continue;
    }
    const int64_t row0 = int64_t(t0 + s) * R;
    const int rows = int(N - row0 < R ? N - row0 : R);
    for (int r = RP * wr; r < rows; r += RP * RW) {  // rows r and r + 1 share the X loads
      const uint8_t* row = ring + slot * stage + size_t(r) * rb;
      const bool two = RP == 2 && r + 1 < rows;
      float acc[2][MT] = {};
      if constexpr (XR > 0) {
#pragma unroll
        for (int j = 0; j < XR; ++j) {
          if (lane + 32 * j >= U) break;
          unit_dot<FMT, MT, N16>(row, lane + 32 * j, M, xr[j], acc[0]);
          if (two) unit_dot<FMT, MT, N16>(row + rb, lane + 32 * j, M, xr[j], acc[1]);
        }
      } else {
#pragma unroll 2
        for (int u = lane; u < U; u += 32) {
          XUnit<MT> x;
          load_x<FMT, MT, N16>(x, u, U, M, xq, xm);
          unit_dot<FMT, MT, N16>(row, u, M, x, acc[0]);
          if (two) unit_dot<FMT, MT, N16>(row + rb, u, M, x, acc[1]);
        }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          if (m >= M) break;
          float v = acc[h][m];
#pragma unroll
          for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
          // h = 1 only for a pair (with RP = 1, row r + 1 belongs to another warp).
          if (lane == 0 && (h == 0 || two)) Y[size_t(m) * N + row0 + r + h] = v;
        }
      }
    }
    __syncwarp();
    if (lane == 0) bulk::bar_arrive(&empty[slot]);
  }
  if (tr && lane == 0) {
    atomicMax(&tr[4], now_ns());
    atomicMax(&tr[7], last_full);
  }
}

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
  bool n16 = true;     // TC_QUANT_BULK_DOT=0: the earlier nibble dots (one-CTA M = 1 kernels)
  bool xpairs = true;  // TC_QUANT_BULK_XPAIRS=0: X in rounds of one item per thread
  int pace = 0;        // TC_QUANT_BULK_PACE=d: at most d stages in flight (0: no pacing)
};
// A knob's integer value (core/knobs.h: read once per call inside the row's knobs::Scope).
int env_int(knobs::Id knob, int fallback) {
  const char* v = knobs::get(knob);
  return v && v[0] ? std::atoi(v) : fallback;
}
// One CTA per SM: TC_QUANT_BULK_SMEM_KB (ring + X cap, default 227: at K = 11008 the 8
// stages hold a CTA's whole share of the down projection; 200 was the earlier cap, 4 stages
// there), TC_QUANT_BULK_STAGES (most stages, 2..16, default 8), TC_QUANT_BULK_FIRST=n (the
// producer issues n stages, then waits until X is quantized; default 4, 0: no wait),
// TC_QUANT_BULK_RP=1|2 (rows per warp and stage; 0, the default: the busier choice),
// TC_QUANT_BULK_DOT=0 (Config::n16), TC_QUANT_BULK_PACE=d (the producer keeps at most d
// stages in flight: it waits for stage s - d to land, so X's loads, which queue behind the
// copies in flight, wait for d stages at most while the ring still fills during X's
// quantization; FIRST stops the stream there instead; 0: no pacing).
// Defaults: M = 1 Q4_0 / Q4_K PACE=2 FIRST=0 (7B step, H200 22:10 UTC: Q4_0 1.221 ms against
// 1.267 with FIRST=4, Q4_K 1.338 against 1.402; PACE=2 FIRST=4 1.231 / 1.348, PACE=3 FIRST=0
// 1.227 / 1.356; 22:28 UTC: PACE 1 1.471 / 1.570, PACE 4 1.263 / 1.390); elsewhere FIRST=4, no
// pacing (Q8_0 paced: PACE 2 2.143, PACE 3 2.062 against 1.955 ms; M = 2 Q4_0: no effect). On the
// step FIRST 3, 4, 5 measured equal within the noise, 0, 2 and 6 slower (20:18-20:23 UTC).
Config one_cta(int warps, bool paced) {
  Config c{warps, 1, kSmemCap1};
  const int kb = env_int(knobs::kQuantBulkSmemKb, 227);
  c.cap = size_t(std::clamp(kb, 64, 227)) * 1024;
  c.stages = std::clamp(env_int(knobs::kQuantBulkStages, 8), 2, kMaxStages);
  c.first = std::max(env_int(knobs::kQuantBulkFirst, paced ? 0 : 4), 0);
  c.rp = env_int(knobs::kQuantBulkRp, 0);
  c.n16 = env_int(knobs::kQuantBulkDot, 1) != 0;
  c.pace = std::max(env_int(knobs::kQuantBulkPace, paced ? 2 : 0), 0);
  return c;
}
// TC_QUANT_BULK_XPAIRS=0 (A/B): X quantized in rounds of one item per thread, as before the
// fifth session (quantize_x: two items a thread where X has more items than threads).
Config config(int M, tc_dtype_t w) {
  const bool xpairs = env_int(knobs::kQuantBulkXpairs, 1) != 0;
  if (M > 1) {  // M > 1: registers for X
    Config c = one_cta(8, false);
    c.xpairs = xpairs;
    return c;
  }
  if (env_int(knobs::kQuantBulkCtas, 1) == 2) {  // as measured: no wait for X
    Config c{16, 2, kSmemCap2};
    c.first = 0;
    c.xpairs = xpairs;
    // Not measured with pacing: two CTAs per SM lost to their shallow ring (<= 113 KB), which
    // matters less when only 2 stages need to be in flight (an A/B for the next device run).
    c.pace = std::max(env_int(knobs::kQuantBulkPace, 0), 0);
    return c;
  }
  Config c = one_cta(env_int(knobs::kQuantBulkWarps, 16) == 8 ? 8 : 16, w != TC_DTYPE_Q8_0);
  c.xreg = c.warps == 16 && env_int(knobs::kQuantBulkXreg, 1) == 1;
  c.xpairs = xpairs;
  return c;
}

// X in registers (the XR = 2 kernels): M = 1, K <= 4096 (at most 2 units per lane).
bool use_xreg(const Args& a, const Config& c) {
  return c.xreg && a.M == 1 && a.K / 64 <= 64;
}

Geo geometry(const Args& a, int mt, const Config& c) {
  Geo g;
  const size_t rb = w_row_bytes(a);
  g.R = 1;
  while (g.R < 32 && 2 * g.R * rb <= kStageCap) g.R *= 2;
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

template <int FMT, int MT, int CW, int MINB, int XR = 0, bool N16 = true>
tc_status_t launch_fmt(const Args& a, const Config& c, cudaStream_t s) {
  auto* kernel = bulk_gemv_kernel<FMT, MT, CW, MINB, XR, N16>;
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
  const int grid = int(std::min<int64_t>(tiles, sm_count()));
  unsigned long long* trace = bulk_trace::slot(a.N, a.K, grid, FMT);
  if (env_int(knobs::kQuantBulkVerbose, 0) == 1) {
    static std::mutex mu;
    static std::set<std::tuple<const void*, int, int>> seen;
    std::lock_guard lock(mu);
    if (seen.insert({reinterpret_cast<const void*>(kernel), a.N, a.K}).second)
      std::fprintf(stderr,
                   "bulk gemv fmt %d M %d N %d K %d: warps %d ctas %d xr %d n16 %d R %d RP %d S %d "
                   "first %d stage %zu smem %zu, %d CTAs/SM fit\n",
                   FMT, a.M, a.N, a.K, CW, MINB, XR, int(N16), g.R, g.RP, g.S, c.first, g.stage,
                   g.smem,
                   blocks_per_sm(reinterpret_cast<const void*>(kernel), kThreadsOf<CW>, g.smem));
  }
  const cudaError_t e =
      launch_ex(kernel, dim3(unsigned(grid)), dim3(kThreadsOf<CW>), g.smem, s, 1, a.pdl,
                static_cast<const uint8_t*>(a.w), static_cast<const float*>(a.x), a.y, a.M, a.N,
                a.K, uint32_t(w_row_bytes(a)), g.R, g.RP, g.S, c.first > 0 ? c.first : -1, c.pace,
                ablate, int(c.xpairs), trace);
  return e == cudaSuccess ? launched("quant bulk gemv kernel launch")
                          : cuda_fail(e, "quant bulk gemv kernel launch");
}

template <int FMT>
tc_status_t launch_m(const Args& a, cudaStream_t s) {
  const Config c = config(a.M, a.w_dtype);
  if (a.M == 1) {
    if (c.ctas == 2) return launch_fmt<FMT, 1, 16, 2>(a, c, s);
    if (use_xreg(a, c))
      return c.n16 ? launch_fmt<FMT, 1, 16, 1, 2>(a, c, s)
                   : launch_fmt<FMT, 1, 16, 1, 2, false>(a, c, s);
    if (c.warps == 8) return launch_fmt<FMT, 1, 8, 1>(a, c, s);
    return c.n16 ? launch_fmt<FMT, 1, 16, 1>(a, c, s)
                 : launch_fmt<FMT, 1, 16, 1, 0, false>(a, c, s);
  }
  return a.M == 2 ? launch_fmt<FMT, 2, 8, 1>(a, c, s) : launch_fmt<FMT, 4, 8, 1>(a, c, s);
}

}  // namespace

bool gemv_bulk_supports(const Args& a, std::string& why) {
  if (a.x_dtype != TC_DTYPE_F32) return (why = "x must be f32", false);
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q8_0 && a.w_dtype != TC_DTYPE_Q4_K)
    return (why = "formats Q4_0, Q8_0, Q4_K only", false);
  if (a.M < 1 || a.M > kMaxM) return (why = "M > 4", false);
  if (a.K % 256 != 0) return (why = "K % 256 != 0 (rows not a multiple of 16 bytes)", false);
  if (geometry(a, a.M <= 2 ? a.M : kMaxM, config(a.M, a.w_dtype)).S < 2)
    return (why = "X and two stages do not fit in shared memory", false);
  const auto align = reinterpret_cast<uintptr_t>(a.w) | reinterpret_cast<uintptr_t>(a.x);
  if (align % 16 != 0) return (why = "W or X not 16-byte aligned", false);
  return true;
}

tc_status_t launch_gemv_bulk(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  return with_format(a.w_dtype, [&](auto f) { return launch_m<decltype(f)::value>(a, s); });
}

}  // namespace tc::cuda::quant
