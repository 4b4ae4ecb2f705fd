// Batched decode, M <= 32, f16 activations: f16 tensor cores (mma.sync m16n8k16, f32
// accumulators over the whole K) on weights streamed by 1-D bulk copies (quant_kernels.h:
// launch_mma_f16).
//
// Why a second MMA kernel: the int8 one (quant_mma_bulk.cu) ends every 32-weight block in a
// per-(row, column) epilogue (int32 to float, d_w d_x, the -8 / min terms) of every accumulator.
// Here each weight is dequantized once to f16 with its block scale folded in (~2 instructions per
// weight pair, quant_mma_f16_units.cuh; at NT 1, Q4_0 / Q8_0, the scale is applied in f32 to
// each block's sums instead, RAW below) and X is f16, so the accumulators run over all K and a
// column tile of 8 adds only 2 MMAs and one 16-byte shared load per 32 x 16 weights. (On the
// H200 both kernels turned out latency bound on the weight stream rather than on that epilogue:
// docs/quant.md.)
//
// A persistent grid of one CTA per SM streams 16-row passes through the ring of quant_bulk.cuh
// (16 rows x a K chunk per stage, one bulk copy per row, rows padded to an odd number of 16-byte
// lines so the 8 row groups of a fragment load hit distinct banks); 16 consumer warps split the
// units of each chunk and meet in shared memory at the end of a pass, in warp order
// (deterministic). X sits in shared memory in f16, in the permuted block order of the fragments
// ([K/32][8 NT columns][4 lanes][8], zeros past M). X comes as f32, f16 or bf16 (Params::xk, a
// runtime kind: half X is read at half the bytes, widened to f32 and rounded as f32 X is, so the
// results are those of X widened to f32, bit for bit). Where all of X fits beside the ring, the
// consumer warps convert it while the first stages land (one kernel, no workspace).
// Otherwise a first kernel writes it to the workspace in that form and K is split between CTAs:
// CTA group c of every split serves the same passes, writes partial sums, and the last CTA of the
// group to finish adds them in split order. The weight stream never waits for the previous grid
// (programmatic dependent launch where the caller asks, always after the convert kernel); X, Y
// and the partial sums do. launch_mma_f16 hands M <= 8 to quant_mma_xreg.cu, the same arithmetic
// without the per-pass barrier (docs/quant.md), which reads X as this one does.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>

#include "core/knobs.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/quant_bulk.cuh"
#include "cuda/quant_launch.cuh"
#include "cuda/quant_mma_f16_units.cuh"
#include "cuda/quant_mma_xreg.cuh"
#include "cuda/tile/mma.cuh"

namespace tc::cuda::quant {
namespace {

using namespace mma_f16;

constexpr int kCW = 16;  // consumer warps; one more warp is the producer
constexpr int kPassRows = 16;
constexpr int kMaxStages = 8, kMinStages = 2;
constexpr size_t kSmemCap = 227 * 1024;  // the H100 / H200 opt-in limit per block
constexpr size_t kHead = 256;            // barriers

// Reduction buffers: two (one barrier a pass instead of two) where they cost little shared
// memory, one at NT = 4 (32 KB each).
__host__ __device__ constexpr int red_bufs(int NT) {
  return NT == 4 ? 1 : 2;
}

struct Geo {
  int NT = 1, S = 0, splits = 1, Ks = 0;  // Ks: K of a split (the last may be shorter)
  int uc = 0;                             // units per chunk: a row's bulk copy per stage
  uint32_t stride = 0;                    // a row's padded slot in a stage
  size_t smem = 0;
  // Workspace (K splits only): X in f16, the partial sums, the CTA groups' counters.
  size_t xh_bytes = 0, part_floats = 0, work = 0;
};

// Chunks of ~2.2 KB per row (as in the int8 MMA kernel, whose first version lost to the copy
// count with 576-byte copies), or ~1.1 KB where that saves a K split: the fewest splits
// (multiples of 256) that leave room beside X for 3 stages of 2.2 KB, else 4 of 1.1 KB, else 2
// of 2.2 KB. A/B knobs: TC_QUANT_F16_UNITS (16, 32, 64) forces the chunk, TC_QUANT_F16_SPLITS
// the least number of splits.
Geo geometry(const Args& a) {
  Geo g;
  const int fmt = format_code(a.w_dtype);
  g.NT = a.M <= 8 ? 1 : a.M <= 16 ? 2 : 4;
  const size_t cols = 8 * g.NT;
  const size_t fixed0 = kHead + size_t(red_bufs(g.NT)) * kCW * g.NT * 4 * 32 * 4;  // + reduction
  const int pieces = a.K / 256, big = fmt == kQ8_0 ? 32 : 64;
  int forced = 0, min_splits = 1;
  if (const char* v = tc::knobs::get(tc::knobs::kQuantF16Units)) forced = std::atoi(v);
  if (forced != 16 && forced != 32 && forced != 64) forced = 0;
  if (const char* v = tc::knobs::get(tc::knobs::kQuantF16Splits))
    min_splits = std::max(1, std::atoi(v));
  auto fit = [&](int splits, int uc) {
    Geo t = g;
    t.uc = uc;
    const uint32_t chunk = uint32_t(uc * unit_bytes(fmt));
    t.stride = chunk + ((chunk / 16) % 2 == 0 ? 16 : 0);  // an odd number of 16-byte lines
    const size_t stage = size_t(kPassRows) * t.stride;
    t.Ks = (pieces + splits - 1) / splits * 256;
    const size_t fixed = fixed0 + size_t(t.Ks) * cols * 2;
    t.S = fixed < kSmemCap ? int(std::min<size_t>(kMaxStages, (kSmemCap - fixed) / stage)) : 0;
    t.smem = fixed + t.S * stage;
    t.splits = (a.K + t.Ks - 1) / t.Ks;
    return t;
  };
  Geo pick;
  for (int splits = std::min(min_splits, pieces); splits <= pieces && pick.S == 0; ++splits) {
    if (forced) {
      const Geo t = fit(splits, forced);
      if (t.S >= 3 || (t.S >= kMinStages && splits == pieces)) pick = t;
      continue;
    }
    const Geo t = fit(splits, big), h = fit(splits, big / 2);
    if (t.S >= 3)
      pick = t;
    else if (h.S >= 3)
      pick = h;
    else if (t.S >= kMinStages)
      pick = t;
  }
  const size_t passes = (size_t(std::max(a.N, 0)) + kPassRows - 1) / kPassRows;
  pick.xh_bytes = size_t(a.K) * cols * 2;
  pick.part_floats = pick.splits > 1 ? size_t(pick.splits) * passes * cols * 16 : 0;
  pick.work = pick.splits > 1 ? pick.xh_bytes + pick.part_floats * 4 + passes * 4 : 0;
  return pick;
}

// X [M][K] (kind xk) to f16 in the fragments' order (x_item) into the workspace, for the K splits.
// Also zeroes the main kernel's arrival counters (cnt, `passes` >= its CTA groups; null without
// K splits).
__global__ void convert_x_kernel(const void* __restrict__ X, int xk, uint4* __restrict__ xh, int M,
                                 int K, int cols, int* __restrict__ cnt, int passes) {
  bulk::grid_wait();  // X is the previous grid's output; the previous main kernel used cnt
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (cnt != nullptr && i < passes) cnt[i] = 0;
  if (i < (K / 32) * cols * 4)
    with_x_kind(xk, [&](auto k) { xh[i] = x_item<decltype(k)::value>(X, M, K, cols, i); });
  bulk::grid_launch_dependents();
}

struct Params {
  const uint8_t* W;
  const void* X;    // X [M][K] of kind xk (XKind): splits == 1 converts it in the kernel
  const uint4* xh;  // splits > 1: X in f16, fragment order, all K (the convert kernel's)
  float* Y;
  float* part;                   // splits > 1: [splits][passes][NT * 128] partial sums of each pass
  int* cnt;                      // splits > 1: [cps] arrivals, zeroed by the convert kernel
  int xk;                        // X's element kind (XKind: f32, f16, bf16)
  int M, N, K, Ks, splits, cps;  // cps: CTAs per split
  uint32_t rb, stride;           // row bytes of W; a row's padded slot in a stage
  int UC, S;                     // units per chunk, stages
};

__device__ __forceinline__ void store_y(const Params& P, int pass, int o, float v) {
  store_frag_y(P.Y, P.M, P.N, pass, o, v);
}

template <int FMT, int NT>
__global__ void __launch_bounds__((kCW + 1) * 32, 1)
    mma_f16_kernel(const __grid_constant__ Params P) {
  // CTA b serves K split b / cps (columns k0 .. k0 + K of W and X) for its share of the passes.
  constexpr int UB = unit_bytes(FMT), COLS = 8 * NT, OUT = NT * 4 * 32, RB = red_bufs(NT);
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  uint64_t* xbar = empty + kMaxStages;
  int* last = reinterpret_cast<int*>(xbar + 1);
  const int split = blockIdx.x / P.cps, c = blockIdx.x % P.cps, k0 = split * P.Ks;
  const int K = min(P.Ks, P.K - k0), U = K / 64, G = K / 32, UC = P.UC, S = P.S;
  uint4* xs = reinterpret_cast<uint4*>(smem + kHead);                         // [G][COLS][4]
  float* red0 = reinterpret_cast<float*>(xs + size_t(P.Ks / 32) * COLS * 4);  // [RB][kCW][OUT]
  uint8_t* ring = reinterpret_cast<uint8_t*>(red0 + RB * kCW * OUT);
  const uint32_t stage = kPassRows * P.stride;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int CH = (U + UC - 1) / UC;  // chunks (stages) per pass
  const int passes = (P.N + kPassRows - 1) / kPassRows;
  const int p0 = int(int64_t(passes) * c / P.cps);
  const int my = (int(int64_t(passes) * (c + 1) / P.cps) - p0) * CH;
  if (my == 0) return;
  if (threadIdx.x == 0) bulk::init_ring(full, empty, S, kCW, xbar);
  __syncthreads();
  bulk::grid_launch_dependents();
  if (warp == kCW) {  // producer warp: lane r copies row r of each stage; with K splits, once
    // the first stages are in flight, X (the convert kernel's output) after the previous grid
    bulk::produce_passes(P.W, P.N, P.rb, size_t(k0 / 64) * UB, U, UC, UB, p0, my, ring, P.stride, S,
                         full, empty, [&] {
                           if (P.splits == 1) return;
                           bulk::grid_wait();
                           const uint32_t xbytes = uint32_t(G) * COLS * 64, piece = xbytes / 32;
                           if (lane == 0) bulk::bar_expect_tx(xbar, xbytes);
                           __syncwarp();
                           bulk::copy(reinterpret_cast<uint8_t*>(xs) + lane * piece,
                                      reinterpret_cast<const uint8_t*>(P.xh) +
                                          size_t(k0 / 32) * COLS * 64 + lane * piece,
                                      piece, xbar);
                         });
    return;
  }
  bulk::grid_wait();  // Y, the partial sums, the counters: the previous grids are done
  // A warp's units are u = warp + kCW i of chunks of a multiple of 4 units: u % 4 (Q4_K's
  // quarter of a super-block) is warp % 4 for all of them.
  static_assert(kCW % 4 == 0, "Q4_K units of a warp share their quarter");
  const int g = lane / 4, t = lane % 4, c4 = warp % 4;
  // Per block h of a unit, two independent MMA chains (one at NT = 4, where registers run out).
  constexpr int CHAINS = NT == 4 ? 1 : 2;
  tile::FragC16x8 acc[CHAINS][NT] = {};
  if (P.splits == 1) {  // X to f16 here while the first stages land: no convert kernel between
    const int items = G * COLS * 4;  // this grid and the previous one
    with_x_kind(P.xk, [&](auto k) {
#pragma unroll 4
      for (int i = threadIdx.x; i < items; i += kCW * 32)
        xs[i] = x_item<decltype(k)::value>(P.X, P.M, P.K, COLS, i);
    });
    bulk::sync_consumers(kCW * 32);
  } else {
    bulk::bar_wait(xbar, 0);
  }
  const uint4* xl = xs + g * 4 + t;  // this lane's 16 bytes of block 0, column tile 0
  for (int s = 0; s < my; ++s) {
    const int slot = s % S, ch = s % CH;
    bulk::bar_wait(&full[slot], uint32_t((s / S) & 1));
    const int u0 = ch * UC, uc = min(UC, U - u0);
    const uint8_t* r0 = ring + slot * stage + g * P.stride;
#pragma unroll 2
    for (int u = warp; u < uc; u += kCW) {
      // RAW (NT 1, Q4_0 / Q8_0): block scales on each block's sums, as quant_mma_xreg.cu does
      // (mma_block: the same order and arithmetic, so the same bits).
      constexpr bool RAW = NT == 1 && FMT != kQ4_K;
      UnitA A;
      load_unit<FMT, RAW>(r0, P.stride, u, t, c4, A);
      const int ug = u0 + u;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
          mma_block<RAW>(acc[h % CHAINS][nt], A, h, xl[(size_t(2 * ug + h) * COLS + 8 * nt) * 4]);
      }
    }
    __syncwarp();
    if (lane == 0) bulk::bar_arrive(&empty[slot]);
    if (ch != CH - 1) continue;
    // Pass done: the warps' partial sums meet in warp order (deterministic); output o of the
    // fragment (store_y) is thread o's (OUT <= 512 consumer threads).
    float* red = red0 + (RB > 1 ? (s / CH) % RB : 0) * kCW * OUT;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        red[(warp * NT * 4 + nt * 4 + i) * 32 + lane] =
            acc[0][nt].r[i] + (CHAINS > 1 ? acc[CHAINS - 1][nt].r[i] : 0.0f);
#pragma unroll
        for (int ch2 = 0; ch2 < CHAINS; ++ch2) acc[ch2][nt].r[i] = 0.0f;
      }
    bulk::sync_consumers(kCW * 32);
    const int o = threadIdx.x, pass = p0 + s / CH;
    float v = 0.0f;
    if (o < OUT)
      for (int w = 0; w < kCW; ++w) v += red[w * OUT + o];
    if (o < OUT) {
      if (P.splits > 1)  // this split's partial sum; the last split of the CTA group adds them
        P.part[(size_t(split) * passes + pass) * OUT + o] = v;
      else
        store_y(P, pass, o, v);
    }
    // With two buffers, the next pass writes the other one, and the one after that comes after
    // the next pass's barrier, which every thread reaches after this sum.
    if (RB == 1) bulk::sync_consumers(kCW * 32);
  }
  if (P.splits == 1) return;
  // The CTAs c of every split served the same passes: the last of them to get here adds the
  // partial sums of those passes in split order (deterministic) and writes Y. One fence and one
  // arrival per CTA (a fence and an arrival per pass cost ~1.5 us a pass on the H200).
  __threadfence();
  bulk::sync_consumers(kCW * 32);
  if (threadIdx.x == 0) *last = atomicAdd(&P.cnt[c], 1) == P.splits - 1;
  bulk::sync_consumers(kCW * 32);
  if (!*last) return;
  __threadfence();
  const int p1 = p0 + my / CH;
  for (int i = threadIdx.x; i < (p1 - p0) * OUT; i += kCW * 32) {
    const int pass = p0 + i / OUT, o = i % OUT;
    float v = 0.0f;
    for (int sp = 0; sp < P.splits; ++sp)
      v += __ldcg(P.part + (size_t(sp) * passes + pass) * OUT + o);
    store_y(P, pass, o, v);
  }
}

template <int FMT, int NT>
tc_status_t launch_main(const Args& a, const Geo& g, cudaStream_t s) {
  auto* kernel = mma_f16_kernel<FMT, NT>;
  if (const tc_status_t st = allow_smem(reinterpret_cast<const void*>(kernel), kSmemCap);
      st != TC_SUCCESS)
    return st;
  Params p;
  p.W = static_cast<const uint8_t*>(a.w);
  p.X = a.x;
  p.xk = x_kind(a.x_dtype);
  p.xh = static_cast<const uint4*>(a.work);
  p.Y = a.y;
  p.part = reinterpret_cast<float*>(static_cast<uint8_t*>(a.work) + g.xh_bytes);
  p.cnt = reinterpret_cast<int*>(p.part + g.part_floats);
  p.M = a.M;
  p.N = a.N;
  p.K = a.K;
  p.Ks = g.Ks;
  p.splits = g.splits;
  const int passes = (a.N + kPassRows - 1) / kPassRows;
  p.cps = std::max(1, std::min(passes, sm_count() / g.splits));  // CTAs per split
  p.rb = uint32_t(w_row_bytes(a));
  p.stride = g.stride;
  p.UC = g.uc;
  p.S = g.S;
  // With K splits the convert kernel comes first: PDL orders this grid after it (its weight
  // stream starts at once); without, PDL as the caller asks (after the previous kernel).
  const cudaError_t e = launch_ex(kernel, dim3(unsigned(g.splits * p.cps)), dim3((kCW + 1) * 32),
                                  g.smem, s, 1, g.splits > 1 || a.pdl, p);
  return e == cudaSuccess ? launched("quant mma f16 kernel launch")
                          : cuda_fail(e, "quant mma f16 kernel launch");
}

// Where it fits (M <= 8, K <= 12288 by default: mma_f16_xreg_fits) the kernel without pass
// barriers, X in registers (quant_mma_xreg.cu), unless the A/B knobs ask for this one's
// geometry (forced chunks or K splits). It needs no workspace; mma_f16_work_bytes still sizes
// this kernel's (a knob may send the call here).
bool use_xreg(const Args& a) {
  const char* units = tc::knobs::get(tc::knobs::kQuantF16Units);
  const char* splits = tc::knobs::get(tc::knobs::kQuantF16Splits);
  if ((units && std::atoi(units) > 0) || (splits && std::atoi(splits) > 1)) return false;
  return mma_f16_xreg_fits(a);
}

}  // namespace

bool mma_f16_preferred(const Args& a) {
  return a.w_dtype != TC_DTYPE_Q8_0 || a.M <= 8;
}

size_t mma_f16_work_bytes(const Args& a) {
  return a.M >= 1 && a.M <= 32 ? geometry(a).work : 0;  // M > 32 is refused: no workspace
}

size_t mma_f16_work_bytes_upto(const Args& a) {
  size_t most = 0;
  Args b = a;
  for (b.M = std::min(a.M, 32); b.M >= 1; --b.M) most = std::max(most, mma_f16_work_bytes(b));
  return most;
}

bool mma_f16_supports(const Args& a, std::string& why) {
  if (!bulk_mma_problem_ok(a, why)) return false;
  const Geo g = geometry(a);
  if (g.S < kMinStages) return (why = "X and the stages do not fit in shared memory", false);
  return bulk_mma_buffers_ok(a, g.work, "the f16 X", why);
}

tc_status_t launch_mma_f16(const Args& a, void* stream) {
  if (use_xreg(a)) return launch_mma_f16_xreg(a, stream);
  auto s = static_cast<cudaStream_t>(stream);
  const Geo g = geometry(a);
  const int cols = 8 * g.NT, items = (a.K / 32) * cols * 4;
  const int passes = (a.N + kPassRows - 1) / kPassRows;
  int* cnt =
      g.splits > 1
          ? reinterpret_cast<int*>(static_cast<uint8_t*>(a.work) + g.xh_bytes + g.part_floats * 4)
          : nullptr;
  const int threads = std::max(items, passes);
  if (g.splits > 1) {  // unsplit, the main kernel converts X itself
    const cudaError_t e = launch_ex(convert_x_kernel, dim3(unsigned((threads + 255) / 256)),
                                    dim3(256), 0, s, 1, a.pdl, a.x, x_kind(a.x_dtype),
                                    static_cast<uint4*>(a.work), a.M, a.K, cols, cnt, passes);
    if (e != cudaSuccess) return cuda_fail(e, "quant mma f16: X convert launch");
  }
  return with_format(a.w_dtype, [&](auto f) {
    constexpr int F = decltype(f)::value;
    return g.NT == 1   ? launch_main<F, 1>(a, g, s)
           : g.NT == 2 ? launch_main<F, 2>(a, g, s)
                       : launch_main<F, 4>(a, g, s);
  });
}

}  // namespace tc::cuda::quant
