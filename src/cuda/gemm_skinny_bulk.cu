// Decode GEMM, M <= 32, B (the weights, N x K) streamed through shared memory by the TMA:
// C[M,N] = alpha * A[M,K] B[N,K]^T + beta * C. Same contract as gemm_skinny.cu (which plans).
// An experiment, off by default (TC_SKINNY_BULK=1 runs it): correct on every test case, but
// slower than the register kernel on every decode cell (H200, 2026-11-29 18:11 UTC, tc bench
// decode, GB/s at M = 1 / 16 / 32; register kernel in brackets): W 4096^2 2632 / 2418 / 1661
// (3101 / 2894 / 2407), 14336x4096 2535 / 2367 / 1405 (3827 / 3328 / 2494), 4096x14336
// 3472 / 2901 / 2050 (3652 / 3469 / 2734). Without the L2 hint: within 2%. docs/gemm.md round 6
// has the analysis: the consumers, not DRAM, set the pace.
//
// Why: the register kernel keeps at most 64 KB of B in flight per SM in registers, which takes
// both of its CTAs' whole register file, so the next PDL grid cannot start beside it and DRAM
// idles between calls (H200: 2.9-3.0 TB/s on W 4096^2, 70% of copy bandwidth). Here a persistent
// grid of one CTA per SM (<= 112 KB of shared memory, <= 112 registers: two fit per SM) streams
// a contiguous range of 32-row tiles: one producer lane keeps S stages (32 rows x 256 k = four
// 64 x 32 tensor-map boxes of 4 KB, 128-byte swizzle; out-of-range rows and k arrive as zeros)
// in flight on quant_bulk.cuh's ring barriers, and each of the 8 consumer warps takes a 32-k
// slice of every stage. Before its grid_dep_wait the producer asks L2 for its first S stages
// (a safe hint, gemm_skinny_bulk.cuh); once its last copy is issued it lets the next grid
// launch, whose CTAs then fetch their first stages while this grid drains.
// First version (H200, 18:03 UTC): one 1-D cp.async.bulk per 512-byte row slice (32 per stage)
// streamed only ~1.0-1.1 TB/s on every shape and M: per-request cost, not bytes, set the rate
// (~7.6 GB/s per SM, ~65 ns per request); boxes carry 8x the bytes per request.
//
// Consumers: a lane's 16-byte shared-memory load (8 consecutive k of one row) is the B fragment
// of two m16n8k16 steps; A's fragments are loaded from global memory (L1/L2) with the same k
// permutation, one stage ahead. 32-row tiles read A once per 32 rows of B (16-row tiles made
// A's L2 traffic twice B's at M = 32). Per tile the 8 warps' K partial sums are added in a fixed
// order through shared memory (deterministic).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/knobs.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemm_skinny_bulk.cuh"
#include "cuda/quant_bulk.cuh"
#include "cuda/tile/mma.cuh"
#include "cuda/tile/tma.cuh"
#include "cuda/tile/tma_host.h"

namespace tc::cuda::skinny {
namespace {

using namespace tc::tile;
namespace ring = tc::cuda::quant::bulk;

constexpr int kCW = 8;                           // consumer warps; one more warp produces
constexpr int kThreads = (kCW + 1) * 32;         // 288
constexpr int kRows = 32;                        // rows of B per tile and per box
constexpr int kBoxK = 64;                        // k per box: one 128-byte swizzle row
constexpr int kBoxBytes = kRows * 128;           // 4 KB
constexpr int kKC = kCW * 32;                    // k per stage: a 32-k chunk per consumer warp
constexpr int kStage = kKC / kBoxK * kBoxBytes;  // 4 boxes, 16 KB
constexpr int kMaxStages = 12;
constexpr int kHead = 256;               // the barriers: full[12], empty[12]
constexpr size_t kSmemCap = 112 * 1024;  // two CTAs per SM: this grid's and the next one's

// Partial sums of 4 warps (warps 4..7 add theirs to warps 0..3's first): [4][MT][kRows].
template <int MT>
constexpr size_t kPart = size_t(4) * MT* kRows * sizeof(float);
// The ring starts 1024-byte aligned (the 128-byte swizzle repeats every 8 rows).
template <int MT>
constexpr size_t kRingOff = (kHead + kPart<MT> + 1023) / 1024 * 1024;

// Stages of A's fragments in flight per consumer lane (registers: 2 x 16 bytes per stage at
// m16, 4 x 16 at m32). Two 288-thread CTAs per SM allow 96 registers (a sub-partition holds 5 of
// the 18 warps); m32 with 3 stages spilled 168 bytes.
template <int MT>
constexpr int kDepth = MT == 32 ? 2 : 4;

template <int MT>
constexpr int stages_of() {
  const size_t s = (kSmemCap - kRingOff<MT> - 1024) / kStage;
  return int(s < kMaxStages ? s : kMaxStages);
}
template <int MT>
constexpr size_t smem_of() {  // + 1024: the dynamic base is only 16-byte aligned
  return kRingOff<MT> + 1024 + size_t(stages_of<MT>()) * kStage;
}

// Asks L2 for the box at (k0, row0) of the map (PTX ISA "cp.async.bulk.prefetch.tensor"); a
// hint, safe before grid_dep_wait (gemm_skinny_bulk.cuh, prefetch_l2).
__device__ __forceinline__ void prefetch_box(const TmaMap* map, i32 k0, i32 row0) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::"l"(map),
               "r"(k0), "r"(row0), "r"(0)
               : "memory");
}

// This CTA's tiles [t0, t1) of 32 rows, and stage s's tile and k.
struct Range {
  i32 t0, t1;
};
__device__ __forceinline__ Range range_of(const Args& a) {
  const i64 tiles = (a.N + kRows - 1) / kRows;
  return {i32(tiles * blockIdx.x / gridDim.x), i32(tiles * (blockIdx.x + 1) / gridDim.x)};
}

__device__ void produce(const TmaMap* map, Range rg, i32 spt, i32 total, int S, u8* stages,
                        uint64_t* full, uint64_t* empty, bool prefetch) {
  tma_prefetch_map(map);
  auto box = [&](i32 s, int b, i32* k0, i32* row0) {
    *row0 = (rg.t0 + s / spt) * kRows;
    *k0 = (s % spt) * kKC + b * kBoxK;
  };
  if (prefetch)
    for (i32 s = 0; s < min(total, S); ++s)
      for (int b = 0; b < kKC / kBoxK; ++b) {
        i32 k0, row0;
        box(s, b, &k0, &row0);
        prefetch_box(map, k0, row0);
      }
  ring::grid_wait();  // B may be the previous grid's output
  for (i32 s = 0; s < total; ++s) {
    const int slot = s % S;
    if (s >= S) ring::bar_wait(&empty[slot], u32((s / S - 1) & 1));
    ring::bar_expect_tx(&full[slot], kStage);  // out-of-range elements arrive as zeros
    for (int b = 0; b < kKC / kBoxK; ++b) {
      i32 k0, row0;
      box(s, b, &k0, &row0);
      tma_load_3d(stages + size_t(slot) * kStage + b * kBoxBytes, map, ring::mbar(&full[slot]), k0,
                  row0, 0);
    }
  }
  ring::grid_launch_dependents();  // every copy issued: the next grid may start its prefetch
}

template <class T, int MT>
__global__ void __launch_bounds__(kThreads, 2)
    gemm_skinny_bulk_kernel(const __grid_constant__ TmaMap map_b, const Args a, int S) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int NH = MT / 8, NA = MT / 16, NJ = kRows / 8;
  extern __shared__ __align__(128) u8 smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  float* part = reinterpret_cast<float*>(smem + kHead);  // [warp % 4][m MT][n kRows]
  u8* stages = smem + kRingOff<MT> + (1024 - smem_addr(smem) % 1024) % 1024;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  const Range rg = range_of(a);
  const i32 spt = (a.K + kKC - 1) / kKC;  // stages per tile
  const i32 total = (rg.t1 - rg.t0) * spt;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      ring::bar_init(&full[s], 1);
      ring::bar_init(&empty[s], kCW);
    }
    ring::fence_barrier_init();
  }
  __syncthreads();
  if (warp == kCW) {
    if (lane == 0) produce(&map_b, rg, spt, total, S, stages, full, empty, a.prefetch != 0);
    return;
  }
  ring::grid_wait();  // A and C belong to the previous grid until it is done
  const T* A = static_cast<const T*>(a.a);
  const int kk = warp * 32 + 8 * q;  // this lane's 8 k within a stage; rows g + 8h of A
  auto load_x = [&](i32 s, uint4(&x)[NH]) {
    const i32 k = (s % spt) * kKC + kk;
#pragma unroll
    for (int h = 0; h < NH; ++h) {
      const i32 m = g + 8 * h;
      x[h] = k < a.K && m < a.M ? *reinterpret_cast<const uint4*>(A + i64(m) * a.lda + k)
                                : uint4{0, 0, 0, 0};
    }
  };
  // Row 8j + g of box warp / 2 holds this lane's 16 bytes at chunk (warp % 2) * 4 + q, stored
  // at chunk position chunk ^ g (128-byte swizzle, 1024-byte aligned boxes).
  const int lds_off = (warp / 2) * kBoxBytes + g * 128 + ((((warp % 2) * 4 + q) ^ g) << 4);
  FragC16x8 acc[NA][NJ] = {};
  // Tile end: warps 0..3 store their K partial sums, warps 4..7 add theirs (a fixed order:
  // deterministic), then each output sums the 4 in order and is stored.
  auto finish_tile = [&](i32 s) {
    for (int round = 0; round < 2; ++round) {
      if (warp / 4 == round) {
        float* pw = part + (warp % 4) * MT * kRows;
#pragma unroll
        for (int h = 0; h < NA; ++h)
#pragma unroll
          for (int j = 0; j < NJ; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              float& p = pw[(16 * h + g + 8 * (e / 2)) * kRows + 8 * j + 2 * q + e % 2];
              p = round == 0 ? acc[h][j].r[e] : p + acc[h][j].r[e];
              acc[h][j].r[e] = 0.0f;
            }
      }
      ring::sync_consumers(kCW * 32);
    }
    const i32 row0 = (rg.t0 + s / spt) * kRows;
    for (int i = threadIdx.x; i < MT * kRows; i += kCW * 32) {
      const int m = i / kRows, n = i % kRows;
      if (m < a.M && row0 + n < a.N) {
        float v = 0.0f;
#pragma unroll
        for (int w2 = 0; w2 < 4; ++w2) v += part[(w2 * MT + m) * kRows + n];
        store_c(a, m, row0 + n, v);
      }
    }
    ring::sync_consumers(kCW * 32);  // `part` is refilled by the next tile
  };
  // A's fragments of stage s + D are loaded right after stage s consumed that register slot, so
  // D stages of time cover their L2 latency (with one stage ahead, that latency set the pace:
  // 1.5-2.8 TB/s, falling with M; H200 18:07 UTC).
  constexpr int D = kDepth<MT>;
  uint4 x[D][NH];
#pragma unroll
  for (int d = 0; d < D; ++d)
    if (d < total) load_x(d, x[d]);
  for (i32 s0 = 0; s0 < total; s0 += D) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const i32 s = s0 + d;
      if (s >= total) break;
      const int slot = s % S;
      ring::bar_wait(&full[slot], u32((s / S) & 1));
      const u8* st = stages + size_t(slot) * kStage + lds_off;
      uint4 w[NJ];
#pragma unroll
      for (int j = 0; j < NJ; ++j) w[j] = *reinterpret_cast<const uint4*>(st + j * 8 * 128);
      __syncwarp();
      if (lane == 0) ring::bar_arrive(&empty[slot]);
#pragma unroll
      for (int h = 0; h < NA; ++h) {
        // k offsets (0,1 | 2,3) of the lane's 8 are logical (2q | 2q+8) of step 0, (4,5 | 6,7)
        // of step 1; A rows 16h + g and 16h + g + 8.
        const uint4 lo = x[d][2 * h], hi = x[d][2 * h + 1];
        const FragA16x16 fa0{{lo.x, hi.x, lo.y, hi.y}}, fa1{{lo.z, hi.z, lo.w, hi.w}};
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
          mma_16816<T>(acc[h][j], fa0, FragB16x8{{w[j].x, w[j].y}});
          mma_16816<T>(acc[h][j], fa1, FragB16x8{{w[j].z, w[j].w}});
        }
      }
      if (s + D < total) load_x(s + D, x[d]);
      if (s % spt == spt - 1) finish_tile(s);
    }
  }
#else
  __trap();  // planned on sm_90+ only
#endif
}

template <class T, int MT>
tc_status_t launch_mt(const Args& a, const GemmPlan& plan, cudaStream_t stream) {
  auto kernel = gemm_skinny_bulk_kernel<T, MT>;
  static std::atomic<unsigned long long> ready{0};  // per instance, a bit per device
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return TC_ERROR_BACKEND_FAILURE;
  const unsigned long long bit = 1ull << (dev & 63);
  if (!(ready.load(std::memory_order_acquire) & bit)) {
    // Room for two CTAs per SM needs the largest shared-memory carveout.
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(smem_of<MT>())) != cudaSuccess ||
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100) !=
            cudaSuccess)
      return TC_ERROR_BACKEND_FAILURE;
    ready.fetch_or(bit, std::memory_order_acq_rel);
  }
  TmaMap map;  // B as K x N (inner k), 64 x 32 boxes; rows and k past the ends read as zero
  if (!tma_encode_3d(&map, a.b, sizeof(T), uint64_t(a.K), uint64_t(a.N), 1,
                     uint64_t(a.ldb) * sizeof(T), 0, kBoxK, kRows))
    return TC_ERROR_BACKEND_FAILURE;
  const cudaError_t e = launch_maybe_pdl(kernel, dim3(plan.grid), dim3(kThreads), smem_of<MT>(),
                                         stream, 1, map, a, plan.stages);
  return e == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

}  // namespace

bool plan_skinny_bulk(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan) {
  const tc_gemm_desc& d = p.d;
  if (dev.cc_major < 9 || d.M > 32 || d.K < 1) return false;
  const bool m32 = d.M > 16;
  const int S = m32 ? stages_of<32>() : stages_of<16>();
  if (dev.smem_optin < (m32 ? smem_of<32>() : smem_of<16>())) return false;
  const char* pf = knobs::get(knobs::kSkinnyBulkPrefetch);  // "0": no L2 hint (an A/B)
  plan->prefetch = !(pf && std::strcmp(pf, "0") == 0);
  if (!tma_encoder() || !tma_pitch_ok(uint64_t(d.ldb) * 2)) return false;
  const int tiles = (d.N + kRows - 1) / kRows;
  plan->grid = std::min(tiles, dev.sm_count);
  plan->stages = S;
  plan->name = std::string("gemm_skinny_bulk_") + (d.a_dtype == TC_DTYPE_F16 ? "f16" : "bf16") +
               "_f32_nt_m" + (m32 ? "32" : "16") + "_n32_w8_k256_tma64x32_s" + std::to_string(S) +
               "_aligned16" + (plan->prefetch ? "" : "_nopf");
  plan->workspace_bytes = 0;
  return true;
}

tc_status_t launch_skinny_bulk(const GemmProblem& p, const GemmPlan& plan) {
  const Args a = make_args(p, plan);
  auto stream = static_cast<cudaStream_t>(p.stream);
  const bool m32 = p.d.M > 16;
  if (p.d.a_dtype == TC_DTYPE_F16)
    return m32 ? launch_mt<f16, 32>(a, plan, stream) : launch_mt<f16, 16>(a, plan, stream);
  return m32 ? launch_mt<bf16, 32>(a, plan, stream) : launch_mt<bf16, 16>(a, plan, stream);
}

}  // namespace tc::cuda::skinny
