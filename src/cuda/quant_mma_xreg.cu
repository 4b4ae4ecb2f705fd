// Batched decode, M <= 32, f16 MMA: the fragments, dequantization and weight ring of
// quant_mma_f16.cu without its two per-pass costs (quant_mma_xreg.cuh says where it serves).
//
// Why: on the H200 the pass-barrier kernel ran at ~0.45 instructions per cycle and scheduler
// with every consumer warp in lockstep: each 16-row pass ended in a CTA-wide barrier, so all 16
// warps issued their shared-memory loads at once (X's B fragments, 1 KB a unit at M <= 8, as
// many bytes as the weights' loads) and then all computed, and X was converted per CTA before
// any pass started. Here:
// - X lives in registers: warp w always takes the units u = w + 16 j (j < XU) of every pass, so
//   each lane loads its B fragments of those units once from global memory (x_item: the same
//   f16 values and order as the shared-memory copy of the other kernel) and shared memory
//   carries only the weights. XU NT 8 registers: at most 32 (48 for M <= 8 with K split). X
//   comes as f32, f16 or bf16 (xk, a runtime kind; x_item widens half X to f32 exactly, so the
//   bits are those of X widened to f32).
// - No CTA-wide barrier: warps meet only through mbarriers. After its units of pass q a warp
//   releases the stage, writes its partial sums into reduction slot q % RS (waiting for that
//   slot's previous reduction first) and arrives on the slot; warp q % 16 adds the 16 partials
//   of pass q in warp order (deterministic) one pass later, writes Y, and frees the slot. So the
//   warps drift apart by up to the ring's depth and their load and math phases overlap.
// - Where X of all K does not fit in those registers (M <= 8: K > 4096; M <= 16: K > 2048;
//   M <= 32: K > 1024), a cluster of C = 2 or 4 CTAs splits K: each rank streams its K range of
//   the same passes, and the reducing warp of rank r > 0 stores its pass sums into rank 0's
//   shared memory (DSMEM) and arrives on rank 0's barrier; rank 0 adds them in rank order
//   (deterministic) and writes Y. No workspace, one launch.
// With C = 1 the per-warp unit order and the two accumulator chains are those of the
// pass-barrier kernel, so both give the same bits. Ring: one stage per pass (the rank's K range
// of 16 rows, one bulk copy per row, rows padded to an odd number of 16-byte lines), as many
// stages as fit (up to 8), quant_bulk.cuh's producer.
//
// Measured (H200, docs/quant.md): at M = 8 6-21% less time than the pass-barrier kernel per
// launch, decode batch 8 7-11% less; at M = 32 the 4-CTA clusters (576-byte copies, one unit per
// warp and pass, 256 reduction loads per reducing lane and pass) made the decode step 1.5x
// slower, so by default only M <= 8 comes here (TC_QUANT_F16_XREG_MAXM).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/knobs.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemv_quant_bulk_trace.cuh"
#include "cuda/quant_bulk.cuh"
#include "cuda/quant_launch.cuh"
#include "cuda/quant_mma_bulk_units.cuh"
#include "cuda/quant_mma_f16_units.cuh"
#include "cuda/quant_mma_xreg.cuh"
#include "cuda/tile/mma.cuh"

namespace tc::cuda::quant {
namespace {

using namespace mma_f16;

__device__ unsigned g_xreg_trace_count = 0;  // TC_QUANT_F16_ABLATE=3's CTA count

constexpr int kCW = 16;  // consumer warps; one more warp is the producer
constexpr int kPassRows = 16;
constexpr int kMaxRS = 4;  // reduction slots (2 or 4: Geo::RS)
constexpr int kMaxStages = 8;
constexpr size_t kSmemCap = 227 * 1024;  // the H100 / H200 opt-in limit per block
// Barriers: full, empty [kMaxStages]; rfull, rempty, xfull, xempty [kMaxRS]; xready; xbar.
constexpr size_t kHead = 512;
// TC_QUANT_F16_XTMA: X's rows in shared memory Ks + kXPad elements apart, so that the 8 rows of
// a fragment load (32 or 64 contiguous bytes each) fall on distinct banks (Ks * 2 is a multiple
// of 512 bytes).
constexpr int kXPad = 16;

// Rank 0 of a cluster adds the other ranks' sums of each pass (quant_bulk.cuh's cluster
// helpers: remote, st_remote, arrive_remote, wait_cluster).
using bulk::arrive_remote;
using bulk::remote;
using bulk::st_remote;
using bulk::wait_cluster;

struct Geo {
  int NT = 1, C = 1, XU = 0, S = 0, RS = 2, Ks = 0;  // C: CTAs of a cluster splitting K (Ks each)
  int xfirst = -1;      // stages issued before the consumers have loaded X (-1: no wait)
  bool hoist = true;    // mma_xreg_kernel's HOIST
  int pace = 0;         // stages in flight at most (0: the ring's S)
  int ablate = 0;       // TC_QUANT_F16_ABLATE (measurement only, Y not valid), below
  int rpc = 1;          // rows a copy (TC_QUANT_F16_RPC, with ablate)
  int xpref = 0;        // TC_QUANT_F16_XPREF=1: X prefetched into L2 before the grid wait
  int xtma = 0;         // X by bulk copies into the ring's last xslots (TC_QUANT_F16_XTMA=0: loads)
  int xslots = 0;       // ring slots X takes until it is in registers (xtma)
  bool i8 = false;      // TC_QUANT_F16_I8=1: X quantized to int8 in registers, int8 MMA
  uint32_t stride = 0;  // a row's padded slot in a stage (the rank's K range of the row, whole)
  size_t smem = 0;
};

int env_or(tc::knobs::Id id, int fallback) {
  const char* v = tc::knobs::get(id);
  return v && *v ? std::atoi(v) : fallback;
}

// Per rank: units U_r = Ks / 64, XU = U_r / 16 rounded up, X in XU * NT * 8 registers: at most
// 32, or 48 for NT = 1 with K split. The fewest CTAs per cluster that keep that, among the
// instantiated kernels (launch_format): NT = 1: C 1 (XU 1..4) or 2 (XU 2, 4, 6); NT = 2: C 1 or
// 2 (XU 2); NT = 4: C 1, 2 or 4 (XU 1). XU = 0: none fits.
// A/B knobs: TC_QUANT_F16_XCL=2 (M <= 8: 2-CTA clusters also where one CTA's registers hold X,
// e.g. K = 4096, so that each CTA loads half of X: at M = 8 a CTA's X is 128 KB of f32 from L2,
// 17 MB a launch over 132 CTAs; measured slower: decode batch 8 Q4_0 2.331 against 2.188 ms,
// the streaming shape 176 against 119 us); TC_QUANT_F16_XFIRST=n (the producer issues n stages,
// then waits until every consumer warp has loaded its X; default 2, 0: no wait);
// TC_QUANT_F16_XPACE=d (at most d stages in flight, bulk::produce_passes; 0: the ring's S);
// TC_QUANT_F16_HOIST=0 (the kernel's HOIST). H200 22:10 UTC, decode batch 8 (ms, Q4_0 / Q8_0 /
// Q4_K): XFIRST=2 2.103 / 2.766 / 2.324, XFIRST=1 2.137 / - / 2.370, none 2.174-2.188 / 2.790 /
// 2.540; XPACE=2 2.156 / 2.795 / 2.495; 22:28 UTC XFIRST=3 2.094 / - / 2.387, 4 2.146 / - / 2.477.
Geo geometry(const Args& a) {
  Geo g;
  g.NT = a.M <= 8 ? 1 : a.M <= 16 ? 2 : 4;
  const int pieces = a.K / 256;
  const int c0 = g.NT == 1 && pieces >= 2 && env_or(tc::knobs::kQuantF16Xcl, 1) == 2 ? 2 : 1;
  const int xfirst = env_or(tc::knobs::kQuantF16Xfirst, 2);
  g.xfirst = xfirst > 0 ? xfirst : -1;
  g.hoist = env_or(tc::knobs::kQuantF16Hoist, 1) != 0;
  g.pace = std::max(env_or(tc::knobs::kQuantF16Xpace, 0), 0);
  // TC_QUANT_F16_XPREF=1 (A/B): X's rows prefetched into L2 (cp.async.bulk.prefetch) before the
  // grid wait. H200 2026-11-30 13:36 UTC, two alternations, M = 8 X f16: the grid wait to X
  // loaded 2.9-3.0 us either way (so X was not coming from DRAM), 7B step at batch 8 Q4_0
  // 1.960-1.972 / 1.965 ms, Q8_0 2.664-2.666 / 2.631-2.633, Q4_K 2.283-2.284 / 2.300-2.306:
  // not the default.
  g.xpref = env_or(tc::knobs::kQuantF16Xpref, 0) == 1 ? 1 : 0;
  // TC_QUANT_F16_ABLATE (measurement only, Y not valid): 1 the consumers take X (loads, or
  // with TC_QUANT_F16_XTMA=1 its bulk copies) and then release each stage as it lands (the
  // weight stream with X, no math); 2 the same without X; 3 as 1, and warp 0 of the
  // 5000th..5199th CTA (counted over launches) prints "XT count cta entry grid-wait X-loaded
  // first-stage end" (globaltimer ns; scripts/trace_sum.py --xt summarizes them). (The 13:48 UTC
  // run's mode 4, X's rows copied into the reduction slots and not converted, is 3 with XTMA
  // now, conversion included.) TC_QUANT_F16_RPC=r (with ABLATE only: the consumers' layout is
  // one row a copy): r whole rows a bulk copy, to measure the stream with fewer, larger copies.
  // 5 (sixteenth session): the math without the weight stream: the producer completes each stage
  // without copying (the consumers compute on whatever the ring holds and write Y), so the
  // launch's time less this one's is what the stream adds over the consumers' own time.
  g.ablate = std::clamp(env_or(tc::knobs::kQuantF16Ablate, 0), 0, 5);
  if (g.ablate == 4) g.ablate = 0;  // (4 was the fourteenth session's, folded into XTMA)
  g.rpc =
      g.ablate >= 1 && g.ablate <= 3 ? std::clamp(env_or(tc::knobs::kQuantF16Rpc, 1), 1, 16) : 1;
  for (int c = c0; c <= (g.NT == 4 ? 4 : 2) && g.XU == 0; c *= 2) {
    const int ks = (pieces + c - 1) / c, xu = (ks * 4 + kCW - 1) / kCW;
    const int most = g.NT == 1 ? (c == 1 ? 4 : 6) : 4 / g.NT;
    if (xu <= most && (c - 1) * ks < pieces) {  // every rank has a K range
      g.C = c;
      g.Ks = ks * 256;
      g.XU = xu;
    }
  }
  if (g.XU == 0) return g;
  if (g.NT == 1 && g.C == 2) g.XU = g.XU <= 2 ? 2 : g.XU <= 4 ? 4 : 6;  // the instantiated counts
  if (g.NT == 2) g.XU = 2;
  const uint32_t chunk = uint32_t(g.Ks / 64 * unit_bytes(format_code(a.w_dtype)));
  g.stride = chunk + ((chunk / 16) % 2 == 0 ? 16 : 0);  // an odd number of 16-byte lines
  const size_t stage = size_t(kPassRows) * g.stride, out = size_t(g.NT) * 128 * 4;
  auto fit = [&](int rs) {
    const size_t fixed = kHead + rs * (kCW + g.C - 1) * out;  // reduction + exchange slots
    return fixed < kSmemCap ? int(std::min<size_t>(kMaxStages, (kSmemCap - fixed) / stage)) : 0;
  };
  // Four reduction slots where they cost no stage (warps may drift 3 passes apart), else two.
  // A/B knob: TC_QUANT_F16_XRS=2|4.
  const char* v = tc::knobs::get(tc::knobs::kQuantF16Xrs);
  const int want = v ? std::atoi(v) : 0;
  g.RS = want == 2 || want == 4 ? want : fit(4) >= fit(2) ? 4 : 2;
  g.S = fit(g.RS);
  g.smem = kHead + g.RS * (kCW + g.C - 1) * out + g.S * stage;
  // X's rows (this rank's K range, M rows of Ks elements, kXPad apart) come by cp.async.bulk into
  // the ring's last xslots slots, which the producer leaves alone until every consumer warp has X
  // in registers (its gate, xready, at stage xfirst <= S - xslots), instead of 2 XU NT loads a
  // lane. H200 2026-11-30 15:03 UTC, M 8, f16 X, us a launch (QKV / O / gate+up / down), loads
  // -> copies: Q4_0 15.37 / 8.63 / 25.22 / 15.94 -> 14.36 / 7.91 / 23.23 / 14.35, Q8_0 20.33 /
  // 10.26 / 32.49 / 22.97 -> 17.68 / 9.11 / 30.04 / 19.18; grid wait to X in registers 3.55 ->
  // 2.82 us (M 4: 2.94 -> 2.43); the 7B step at batch 8 Q4_0 1.959-1.965 -> 1.931-1.936 ms, Q8_0
  // 2.657-2.665 -> 2.458-2.462, Q4_K 2.316-2.324 -> 2.270-2.271. Where X does not fit beside a
  // gate of at least one stage (or is not 16-byte aligned), the loads; TC_QUANT_F16_XTMA=0 (A/B)
  // the loads everywhere.
  if (env_or(tc::knobs::kQuantF16Xtma, 1) == 1 && g.xfirst > 0 && g.ablate != 2) {
    const size_t xbytes = size_t(a.M) * (g.Ks + kXPad) * (a.x_dtype == TC_DTYPE_F32 ? 4 : 2);
    const int xslots = int((xbytes + stage - 1) / stage);
    if (xslots < g.S && (reinterpret_cast<uintptr_t>(a.x) & 15) == 0) {
      g.xtma = 1;
      g.xslots = xslots;
      g.xfirst = std::min(g.xfirst, g.S - xslots);
    }
  }
  // TC_QUANT_F16_I8=1 (A/B, fifteenth session; not the default): X quantized per 32 to int8 in
  // the consumers' registers (ggml's Q8 codes, those of quant_mma_bulk.cu's X quantizer; a block
  // with a NaN or an infinity gets a NaN scale) and mma.sync m16n8k32 s8 on the raw quants
  // (Q4_0 nibbles, Q8_0 bytes: mma_bulk::load_unit), the block scales applied to each block's
  // int32 sums. SASS, XU 4, a pass's MMA span: Q8_0 166 instructions against 290, Q4_0 190
  // against 255. Expected: up to a third off the math the ring does not hide (Q4_0 X f16, M 8:
  // 4.8 / 2.6 / 8.2 / 5.1 us a launch). Measured slower (H200 2026-11-30 15:40 UTC, two
  // alternations): M 8 X f16 per shape Q4_0 14.33 / 7.90 / 23.31 -> 15.92 / 9.88 / 24.20 us,
  // Q8_0 17.7 / 9.06 / 30.3 -> 19.36 / 10.53 / 31.66; the 7B step at batch 4 / 8 Q4_0 1.909-1.922
  // / 1.934-1.938 -> 2.104-2.114 / 2.080-2.081 ms, Q8_0 2.398-2.399 / 2.468-2.470 -> 2.744-2.758 /
  // 2.686-2.696 (worse at M 4 than at 8: a fixed cost per launch, X's quantization with its 10
  // shuffles a block before the first pass, is the suspect; not measured apart). Trimmed since
  // (4 shuffles a block, Q4_0's codes centred): 16:58 UTC per shape Q4_0 15.76 / 9.31 / 24.31
  // us, the step at batch 4 / 8 Q4_0 2.092-2.095 / 2.056-2.062 ms against 1.908-1.921 /
  // 1.933-1.935 for f16, Q8_0 2.684-2.690 / 2.643-2.648 against 2.411-2.415 / 2.496-2.504; its
  // math alone (ABLATE=5) Q4_0 12.31 / 8.02 / 17.78 against f16's 11.90 / 6.67 / 18.40, Q8_0
  // 11.84 / 7.76 / 17.02 against 12.50 / 6.78 / 19.47, yet Q8_0's whole launch is slower: per
  // block the epilogue (I2FP, scale products, FFMA for 4 outputs) costs about what f16's
  // dequantization does, and X's quantization comes on top.
  // Only M <= 8 without K split (NT 1, C 1), Q4_0 / Q8_0, where 8-bit activations are allowed
  // (act8).
  if (env_or(tc::knobs::kQuantF16I8, 0) == 1 && a.act8 && g.NT == 1 && g.C == 1 &&
      (g.ablate == 0 || g.ablate == 5) &&
      (a.w_dtype == TC_DTYPE_Q4_0 || a.w_dtype == TC_DTYPE_Q8_0))
    g.i8 = true;
  return g;
}

// HOIST: each unit's byte offset in a stage (its rows g, g + 8 and unit uu[j]) is computed once
// per kernel and kept in a register, so a pass adds it to the slot's base (one IADD) instead of
// recomputing it (SASS, Q4_0 NT 1 XU 4: 87 -> 83.5 instructions a unit; batch-8 step -1%);
// false: the earlier form (TC_QUANT_F16_HOIST=0, A/B). Same loads and arithmetic, same bits.
template <int FMT, int NT, int C, int XU, bool HOIST, bool I8 = false>
__global__ void __launch_bounds__((kCW + 1) * 32, 1)
    mma_xreg_kernel(const uint8_t* __restrict__ W, const void* __restrict__ X, int xk,
                    float* __restrict__ Y, int M, int N, int K, int Ks, uint32_t rb,
                    uint32_t stride, int S, int RS, int xfirst, int pace, int ablate, int rpc,
                    int xpref, int xtma, int xslots) {
  constexpr int UB = unit_bytes(FMT), COLS = 8 * NT, OUT = 128 * NT;
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  uint64_t* rfull = empty + kMaxStages;  // a slot's 16 partials written (one arrival a thread)
  uint64_t* rempty = rfull + kMaxRS;     // a slot's reduction read (one arrival a lane)
  uint64_t* xfull = rempty + kMaxRS;     // rank 0: the other ranks' sums of a slot's pass
  uint64_t* xempty = xfull + kMaxRS;     // rank > 0: rank 0 has read this rank's sums
  uint64_t* xready = xempty + kMaxRS;    // every consumer warp has loaded its X (xfirst > 0)
  uint64_t* xbar = xready + 1;           // xtma: X's bulk copies have landed
  float* red = reinterpret_cast<float*>(smem + kHead);  // [RS][kCW][OUT]
  float* xch = red + RS * kCW * OUT;                    // rank 0: [RS][C - 1][OUT]
  uint8_t* ring = reinterpret_cast<uint8_t*>(xch + RS * (C - 1) * OUT);
  const uint32_t stage = kPassRows * stride;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const uint32_t rank = C > 1 ? tile::cluster_ctarank() : 0;
  const int k0 = int(rank) * Ks, U = min(Ks, K - k0) / 64;  // this rank's K range and units
  const int passes = (N + kPassRows - 1) / kPassRows, ncl = gridDim.x / C, ci = blockIdx.x / C;
  const int p0 = int(int64_t(passes) * ci / ncl);
  const int my = int(int64_t(passes) * (ci + 1) / ncl) - p0;  // the same for a cluster's CTAs
  if (my <= 0) return;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      bulk::bar_init(&full[s], 1);
      bulk::bar_init(&empty[s], kCW);
    }
    for (int r = 0; r < RS; ++r) {
      bulk::bar_init(&rfull[r], kCW * 32);
      bulk::bar_init(&rempty[r], 32);
      bulk::bar_init(&xfull[r], C > 1 ? (C - 1) * 32 : 1);
      bulk::bar_init(&xempty[r], 32);
    }
    bulk::bar_init(xready, kCW);
    bulk::bar_init(xbar, 1);
    bulk::fence_barrier_init();
  }
  if constexpr (C > 1)
    tile::cluster_sync();  // the peers' barriers are initialized before any remote arrival
  else
    __syncthreads();
  bulk::grid_launch_dependents();
  if (warp == kCW && ablate == 5) {  // no stream: each stage completed without bytes, in order
    if (lane == 0)
      for (int s = 0; s < my; ++s) {
        if (s == xfirst) bulk::bar_wait(xready, 0);
        if (s >= S) bulk::bar_wait(&empty[s % S], uint32_t((s / S - 1) & 1));
        bulk::bar_arrive(&full[s % S]);
      }
    __syncwarp();            // the warp's other lanes wait here (before a cluster barrier, C > 1)
  } else if (warp == kCW) {  // producer warp: lane r copies row r's K range of each pass (W is
    // not the previous grid's output, so the stream starts before it ends)
    bulk::produce_passes(
        W, N, rb, size_t(k0 / 64) * UB, U, U, UB, p0, my, ring, stride, S, full, empty, [] {},
        xfirst, xready, pace, C == 1 ? rpc : 1);
  } else {
    const unsigned long long t_in = ablate == 3 ? bulk_trace::now_ns() : 0;
    // xpref: X's rows (this rank's K range) prefetched into L2 before the wait. A prefetch
    // returns nothing to the SM, and L2 is where the previous grid's writes land, so what the
    // loads below read after the wait is the same.
    if (xpref && warp == 0 && lane < M) {
      const size_t xb = xk == kXF32 ? 4 : 2, row = size_t(lane) * K + k0;
      const uint32_t bytes = uint32_t(size_t(min(Ks, K - k0)) * xb);
      const char* p = static_cast<const char*>(X) + row * xb;
      if ((reinterpret_cast<uintptr_t>(p) & 15) == 0)
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
    }
    bulk::grid_wait();  // X and Y belong to the previous grid until it is done
    const unsigned long long t_gw = ablate == 3 ? bulk_trace::now_ns() : 0;
    const int g = lane / 4, t = lane % 4;
    // This warp's units and their B fragments. Past U (U < 16 XU) the unit is clamped to U - 1
    // with B = 0: finite weights times zero add nothing, and the loop below has no branch.
    int uu[XU];
    uint4 xb[I8 ? 1 : XU][2][NT];
    // I8: block 2u + h's int8 codes of X column g at k 4t.. and 16 + 4t.. (b0 / b1 of mma
    // m16n8k32 s8), the scales of the C fragment's columns 2t, 2t + 1 (Q4_0: over 16, the
    // factor of its centred codes).
    uint32_t xq8[I8 ? XU : 1][2][2];
    float xsc[I8 ? XU : 1][2][2];
#pragma unroll
    for (int j = 0; j < XU; ++j) uu[j] = min(warp + kCW * j, U - 1);
    // This warp's B fragments of X from `base` (rows kstride elements apart, unit u of this
    // rank at unit u0 + u of a row); ldg: global memory through the read-only path.
    // Loaded item by item: in the SASS each pair of loads waits for the previous pair's
    // conversion. All loads first (branch-free items) measured slower on the H200 (2026-11-30
    // 13:30 UTC, same run, M = 8, X f16: the grid wait to X loaded 3.0 -> 3.5 us, QKV 15.1 ->
    // 15.7 us a launch, the batch-8 step Q4_0 even, Q8_0 -1.3%, Q4_K +1.6%), so X's ~3 us here
    // is not the loads' serial latency (docs/quant.md, "Fourteenth session").
    auto load_x = [&](auto kind, auto ldg, const void* base, int kstride, int u0) {
#pragma unroll
      for (int j = 0; j < XU; ++j) {
        const int u = warp + kCW * j;
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
            xb[j][h][nt] = u < U ? x_item<decltype(kind)::value, decltype(ldg)::value>(
                                       base, M, kstride, COLS,
                                       ((2 * (u0 + u) + h) * COLS + 8 * nt + g) * 4 + t)
                                 : make_uint4(0, 0, 0, 0);
      }
    };
    // I8: this warp's units quantized from `base` as load_x reads them. The 4 lanes of column g
    // hold a block's 32 elements; its scale amax / 127 (NaN where the block holds a NaN or an
    // infinity, so that Y does as in f16) goes to the lanes whose C columns it is: 4 shuffles a
    // block (10 in the version measured at 15:40 UTC, which reduced a separate non-finite flag
    // and the code sums of Q4_0's nibble offset, which its centred codes no longer need).
    auto quant_x = [&](auto kind, auto ldg, const void* base, int kstride, int u0) {
#pragma unroll
      for (int j = 0; j < XU; ++j) {
        const int u = warp + kCW * j;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float4 v0 = make_float4(0.f, 0.f, 0.f, 0.f), v1 = v0;
          if (u < U && g < M) {
            const size_t e = size_t(g) * kstride + 32 * (2 * (u0 + u) + h) + 4 * t;
            v0 = x_load4<decltype(kind)::value, decltype(ldg)::value>(base, e);
            v1 = x_load4<decltype(kind)::value, decltype(ldg)::value>(base, e + 16);
          }
          // The block's largest magnitude as bits: positive floats order as their bits do, and a
          // NaN or an infinity (bits >= 0x7f800000) outranks every finite value.
          auto mag = [](float4 v) {
            return max(max(__float_as_uint(v.x) & 0x7fffffffu, __float_as_uint(v.y) & 0x7fffffffu),
                       max(__float_as_uint(v.z) & 0x7fffffffu, __float_as_uint(v.w) & 0x7fffffffu));
          };
          uint32_t mb = max(mag(v0), mag(v1));
          mb = max(mb, __shfl_xor_sync(~0u, mb, 1));
          mb = max(mb, __shfl_xor_sync(~0u, mb, 2));
          const bool bad = mb >= 0x7f800000u;
          const float amax = __uint_as_float(mb);
          const float id = bad ? 0.0f : q8_inv_scale(amax);
          int sum = 0;  // (not used)
          xq8[j][h][0] = uint32_t(q8_pack4(v0, id, sum));
          xq8[j][h][1] = uint32_t(q8_pack4(v1, id, sum));
          // (Q4_0: amax / 127 / 16 in one rounding, the same value: 16 is a power of two)
          const float d =
              bad ? __int_as_float(0x7fc00000) : amax / (FMT == kQ4_0 ? 2032.0f : 127.0f);
#pragma unroll
          for (int c = 0; c < 2; ++c) xsc[j][h][c] = __shfl_sync(~0u, d, 4 * (2 * t + c));
        }
      }
    };
    // X into this warp's registers, from global memory (ldg) or shared memory: f16 fragments, or
    // (I8) int8 codes and scales.
    auto read_x = [&](auto ldg, const void* base, int kstride, int u0) {
      with_x_kind(xk, [&](auto k) {
        if constexpr (I8)
          quant_x(k, ldg, base, kstride, u0);
        else
          load_x(k, ldg, base, kstride, u0);
      });
    };
    // xtma: this rank's X rows, Ks + kXPad elements apart, in the ring's last xslots slots (free
    // until xready: the producer's gate), read from there: the same values and conversions.
    if (xtma) {  // (geometry: never with ABLATE=2)
      const uint8_t* xs = ring + size_t(S - xslots) * stage;
      const uint32_t eb = xk == kXF32 ? 4 : 2, row_bytes = uint32_t(min(Ks, K - k0)) * eb;
      if (warp == 0 && lane == 0) {
        bulk::bar_expect_tx(xbar, row_bytes * uint32_t(M));
        for (int n = 0; n < M; ++n)
          bulk::copy(const_cast<uint8_t*>(xs) + size_t(n) * (Ks + kXPad) * eb,
                     static_cast<const uint8_t*>(X) + (size_t(n) * K + k0) * eb, row_bytes, xbar);
      }
      bulk::bar_wait(xbar, 0);
      read_x(std::false_type{}, xs, Ks + kXPad, 0);
    } else if (ablate != 2) {  // (I8: never with ABLATE)
      read_x(std::true_type{}, X, K, k0 / 64);
    }
    __syncwarp();
    if (lane == 0) bulk::bar_arrive(xready);  // this warp's X loads are issued (and converted)
    if (ablate >= 1 && ablate <= 3) {  // the weight stream alone: stages released as they land
      const unsigned long long t_x = ablate == 3 ? bulk_trace::now_ns() : 0;
      unsigned long long t_f = 0;
      for (int s = 0; s < my; ++s) {
        bulk::bar_wait(&full[s % S], uint32_t((s / S) & 1));
        if (s == 0 && ablate == 3) t_f = bulk_trace::now_ns();
        __syncwarp();
        if (lane == 0) bulk::bar_arrive(&empty[s % S]);
      }
      if (ablate == 3 && warp == 0 && lane == 0) {
        const unsigned i = atomicAdd(&g_xreg_trace_count, 1u);
        if (i >= 5000 && i < 5200)
          printf("XT %u %d %llu %llu %llu %llu %llu\n", i, blockIdx.x, t_in, t_gw, t_x, t_f,
                 bulk_trace::now_ns());
      }
      if constexpr (C > 1) tile::cluster_sync();
      return;
    }
    // RAW (NT 1, Q4_0 / Q8_0, sixteenth session): the weights enter the f16 fragments as q - 8 /
    // q (exact), each block's two MMAs go into fresh accumulators, and the block's scale
    // multiplies those sums into the running ones: 4 FFMA and 2 scale conversions a block and
    // lane in place of 8 HMUL2 and 2 PRMT, and no weight rounded to f16 after scaling. Why: with
    // the stream taken away (TC_QUANT_F16_ABLATE=5) the consumers alone took longer than the stream
    // with X on Q4_0 (11.9 / 6.7 / 18.4 / 13.5 against 9.3 / 5.3 / 14.4 / 8.7 us a launch, M 8 X
    // f16; H200 2026-11-30 17:00 UTC), and 24 consumer warps in place of 16 made them slower still,
    // so hiding latency is not the lever; fewer instructions a pass is what moved it. SASS, XU
    // 4, a pass: Q4_0 343 -> 333, Q8_0 410 -> 379. Measured (17:18 UTC, as the A/B knob
    // TC_QUANT_F16_RAW=1, three rounds): per shape at M 8 X f16 Q4_0 14.40 / 8.04 / 23.25 ->
    // 13.74 / 7.75 / 22.14 us, Q8_0 17.72 / 9.23 / 30.08 -> 17.46 / 9.05 / 29.68; the 7B step at
    // batch 4 / 8 Q8_0 2.397-2.401 / 2.477-2.484 -> 2.371-2.379 / 2.457-2.460 ms (Q4_0, xreg on
    // O only, even). The pass-barrier kernel does the same at NT 1 (the same bits).
    constexpr bool RAW = NT == 1 && FMT != kQ4_K && !I8;
    // Q4_K: a warp's units share their quarter of a super-block (u % 4 == warp % 4; k0 % 256
    // == 0).
    static_assert(kCW % 4 == 0, "Q4_K units of a warp share their quarter");
    const int c4 = warp % 4;
    uint32_t uoff[XU];  // HOIST: unit j's offset from a slot's base (row g, unit uu[j])
#pragma unroll
    for (int j = 0; j < XU; ++j) {
      const int u = uu[j];
      uoff[j] = uint32_t(g) * stride + uint32_t(FMT == kQ4_K ? 144 * (u >> 2) : UB * u);
      asm volatile("" : "+r"(uoff[j]));  // kept in a register, not recomputed per pass from u
    }
    // Pass q's reduction: by warp q % kCW, in warp order, then (clusters) in rank order.
    auto reduce = [&](int q) {
      const int rs = q % RS;
      bulk::bar_wait(&rfull[rs], uint32_t((q / RS) & 1));
      const float* rr = red + rs * kCW * OUT;
      float v[NT * 4];
#pragma unroll
      for (int i = 0; i < NT * 4; ++i) {
        v[i] = 0.0f;
#pragma unroll
        for (int w = 0; w < kCW; ++w) v[i] += rr[w * OUT + i * 32 + lane];
      }
      bulk::bar_arrive(&rempty[rs]);
      if constexpr (C > 1) {
        if (rank != 0) {  // to rank 0's exchange slot, once rank 0 has read its previous use
          if (q >= RS) wait_cluster(&xempty[rs], uint32_t((q / RS - 1) & 1));
          const uint32_t dst = remote(xch + (rs * (C - 1) + rank - 1) * OUT, 0);
#pragma unroll
          for (int i = 0; i < NT * 4; ++i) st_remote(dst + 4 * (i * 32 + lane), v[i]);
          arrive_remote(remote(&xfull[rs], 0));
          return;
        }
        wait_cluster(&xfull[rs], uint32_t((q / RS) & 1));
#pragma unroll
        for (int r = 0; r < C - 1; ++r)
#pragma unroll
          for (int i = 0; i < NT * 4; ++i) v[i] += xch[(rs * (C - 1) + r) * OUT + i * 32 + lane];
#pragma unroll
        for (int r = 1; r < C; ++r) arrive_remote(remote(&xempty[rs], r));
      }
#pragma unroll
      for (int i = 0; i < NT * 4; ++i) store_frag_y(Y, M, N, p0 + q, i * 32 + lane, v[i]);
    };
    for (int s = 0; s < my; ++s) {
      const int slot = s % S;
      bulk::bar_wait(&full[slot], uint32_t((s / S) & 1));
      const uint8_t* r0 = ring + size_t(slot) * stage + g * stride;
      tile::FragC16x8 acc[2][NT] = {};  // per block h of a unit: two independent MMA chains
      if constexpr (I8) {  // NT 1: block h of unit j, its int32 sums times both scales (Q4_0:
                           // centred codes, 16 (q - 8))
#pragma unroll
        for (int j = 0; j < XU; ++j) {
          mma_bulk::BlockA blk[2];
          if constexpr (HOIST)
            mma_bulk::load_unit<FMT, FMT == kQ4_0>(ring + size_t(slot) * stage + uoff[j], stride, 0,
                                                   t, blk);
          else
            mma_bulk::load_unit<FMT, FMT == kQ4_0>(r0, stride, uu[j], t, blk);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            int c[4];
            mma_bulk::mma_s8(c, blk[h].a[0], blk[h].a[1], blk[h].a[2], blk[h].a[3], xq8[j][h][0],
                             xq8[j][h][1]);
#pragma unroll
            for (int i = 0; i < 4; ++i)  // C row g + 8 (i / 2), column 2t + i % 2
              acc[h][0].r[i] =
                  fmaf(blk[h].d[i >> 1] * xsc[j][h][i & 1], float(c[i]), acc[h][0].r[i]);
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < XU; ++j) {
          UnitA A;
          if constexpr (HOIST)
            load_unit<FMT, RAW>(ring + size_t(slot) * stage + uoff[j], stride, 0, t, c4, A);
          else
            load_unit<FMT, RAW>(r0, stride, uu[j], t, c4, A);
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) mma_block<RAW>(acc[h][nt], A, h, xb[j][h][nt]);
        }
      }
      __syncwarp();
      if (lane == 0) bulk::bar_arrive(&empty[slot]);
      const int rs = s % RS;
      if (s >= RS) bulk::bar_wait(&rempty[rs], uint32_t((s / RS - 1) & 1));
      float* rw = red + (rs * kCW + warp) * OUT;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i)
          rw[(nt * 4 + i) * 32 + lane] = acc[0][nt].r[i] + acc[1][nt].r[i];
      bulk::bar_arrive(&rfull[rs]);
      // One pass late, so that the reducing warp rarely waits for the slowest warp.
      if (s >= 1 && (s - 1) % kCW == warp) reduce(s - 1);
    }
    if ((my - 1) % kCW == warp) reduce(my - 1);
  }
  // No CTA leaves while a peer may still write its exchange slots or arrive on its barriers.
  if constexpr (C > 1) tile::cluster_sync();
}

template <int FMT, int NT, int C, int XU>
tc_status_t launch_fmt(const Args& a, const Geo& g, cudaStream_t s) {
  auto* kernel =
      g.hoist ? mma_xreg_kernel<FMT, NT, C, XU, true> : mma_xreg_kernel<FMT, NT, C, XU, false>;
  if constexpr (NT == 1 && C == 1 && FMT != kQ4_K)
    if (g.i8) kernel = mma_xreg_kernel<FMT, NT, C, XU, true, true>;
  if (const tc_status_t st = allow_smem(reinterpret_cast<const void*>(kernel), kSmemCap);
      st != TC_SUCCESS)
    return st;
  const int passes = (a.N + kPassRows - 1) / kPassRows;
  const int ncl =
      C > 1 ? resident_clusters(reinterpret_cast<const void*>(kernel), C, (kCW + 1) * 32, kSmemCap)
            : sm_count();
  const cudaError_t e =
      launch_ex(kernel, dim3(unsigned(C * std::max(1, std::min(passes, ncl)))),
                dim3((kCW + 1) * 32), g.smem, s, C, a.pdl, static_cast<const uint8_t*>(a.w), a.x,
                x_kind(a.x_dtype), a.y, a.M, a.N, a.K, g.Ks, uint32_t(w_row_bytes(a)), g.stride,
                g.S, g.RS, g.xfirst, g.pace, g.ablate, g.rpc, g.xpref, g.xtma, g.xslots);
  return e == cudaSuccess ? launched("quant mma f16 xreg kernel launch")
                          : cuda_fail(e, "quant mma f16 xreg kernel launch");
}

template <int F>
tc_status_t launch_format(const Args& a, const Geo& g, cudaStream_t s) {
  if (g.NT == 1 && g.C == 1) {
    switch (g.XU) {
      case 1:
        return launch_fmt<F, 1, 1, 1>(a, g, s);
      case 2:
        return launch_fmt<F, 1, 1, 2>(a, g, s);
      case 3:
        return launch_fmt<F, 1, 1, 3>(a, g, s);
      default:
        return launch_fmt<F, 1, 1, 4>(a, g, s);
    }
  }
  if (g.NT == 1)
    return g.XU == 2   ? launch_fmt<F, 1, 2, 2>(a, g, s)
           : g.XU == 4 ? launch_fmt<F, 1, 2, 4>(a, g, s)
                       : launch_fmt<F, 1, 2, 6>(a, g, s);
  if (g.NT == 2)
    return g.C == 1 ? launch_fmt<F, 2, 1, 2>(a, g, s) : launch_fmt<F, 2, 2, 2>(a, g, s);
  return g.C == 1   ? launch_fmt<F, 4, 1, 1>(a, g, s)
         : g.C == 2 ? launch_fmt<F, 4, 2, 1>(a, g, s)
                    : launch_fmt<F, 4, 4, 1>(a, g, s);
}

}  // namespace

bool mma_f16_xreg_fits(const Args& a) {
  const char* v = tc::knobs::get(tc::knobs::kQuantF16Xreg);
  if (v && std::strcmp(v, "0") == 0) return false;
  if (a.M < 1 || a.M > 32 || a.K < 256 || a.K % 256 != 0) return false;
  // M <= 8 by default: at M = 32 the 4-CTA clusters measured slower than the pass-barrier
  // kernel (H200 20:20 UTC: decode batch 32 Q4_0 8.23 vs 5.46 ms; docs/quant.md), M 9..16 was
  // not measured. TC_QUANT_F16_XREG_MAXM=m (A/B, tests): M <= m here.
  const char* mm = tc::knobs::get(tc::knobs::kQuantF16XregMaxm);
  if (a.M > (mm && *mm ? std::atoi(mm) : 8)) return false;
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q8_0 && a.w_dtype != TC_DTYPE_Q4_K)
    return false;
  const Geo g = geometry(a);
  return g.XU > 0 && g.S >= 2;
}

tc_status_t launch_mma_f16_xreg(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  const Geo g = geometry(a);
  return with_format(a.w_dtype, [&](auto f) { return launch_format<decltype(f)::value>(a, g, s); });
}

}  // namespace tc::cuda::quant
