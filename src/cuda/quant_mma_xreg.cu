// Batched decode, M <= 8, K <= 4096 (K % 256 == 0): the f16 MMA kernel of quant_mma_f16.cu
// (same fragments, same dequantization, same weight ring) without its two per-pass costs.
//
// Why: on the H200 the pass-barrier kernel ran at ~0.45 instructions per cycle and scheduler
// with every consumer warp in lockstep: each 16-row pass ended in a CTA-wide barrier, so all 16
// warps issued their shared-memory loads at once (X's B fragments, 1 KB a unit, as many bytes
// as the weights' loads) and then all computed, and X was converted per CTA before any pass
// started. Here:
// - X lives in registers: warp w always takes the units u = w + 16 j (j < XU = U / 16 rounded
//   up, <= 4) of every pass, so each lane loads its B fragments of those units once from global
//   memory (x_item: the same f16 values and order as the shared-memory copy of the other kernel;
//   32 registers at K = 4096) and shared memory carries only the weights.
// - No CTA-wide barrier: warps meet only through mbarriers. After its units of pass q a warp
//   releases the stage, writes its partial sums into reduction slot q % 2 (waiting for that
//   slot's previous reduction first) and arrives on the slot; warp q % 16 adds the 16 partials
//   of pass q in warp order (deterministic) one pass later, writes Y, and frees the slot. So the
//   warps drift apart by up to the ring's depth and their load and math phases overlap.
// The per-warp unit order and the two accumulator chains are those of the pass-barrier kernel,
// so both give the same bits. Ring: one stage per pass (all K of 16 rows, one bulk copy per row,
// rows padded to an odd number of 16-byte lines), as many stages as fit (5 for Q4_0 / Q4_K, 3
// for Q8_0 at K = 4096), quant_bulk.cuh's producer.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

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
constexpr int kMaxXU = 4;  // units of X per warp in registers: K <= 64 kCW kMaxXU = 4096
constexpr int kRS = 2;     // reduction slots
constexpr int kOut = 128;  // outputs of a pass (16 rows x 8 columns)
constexpr int kMaxStages = 8;
constexpr size_t kSmemCap = 227 * 1024;  // the H100 / H200 opt-in limit per block
constexpr size_t kHead = 256;            // barriers: full, empty [kMaxStages], rfull, rempty [kRS]

struct Geo {
  uint32_t stride = 0;  // a row's padded slot in a stage (the row's K, whole)
  int S = 0, XU = 0;
  size_t smem = 0;
};

Geo geometry(const Args& a) {
  Geo g;
  const int U = a.K / 64;
  g.XU = (U + kCW - 1) / kCW;
  const uint32_t chunk = uint32_t(U * unit_bytes(format_code(a.w_dtype)));
  g.stride = chunk + ((chunk / 16) % 2 == 0 ? 16 : 0);  // an odd number of 16-byte lines
  const size_t fixed = kHead + size_t(kRS) * kCW * kOut * 4, stage = size_t(kPassRows) * g.stride;
  g.S = int(std::min<size_t>(kMaxStages, (kSmemCap - fixed) / stage));
  g.smem = fixed + g.S * stage;
  return g;
}

template <int FMT, int XU>
__global__ void __launch_bounds__((kCW + 1) * 32, 1)
    mma_xreg_kernel(const uint8_t* __restrict__ W, const float* __restrict__ X,
                    float* __restrict__ Y, int M, int N, int K, uint32_t rb, uint32_t stride,
                    int S) {
  constexpr int UB = unit_bytes(FMT);
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  uint64_t* rfull = empty + kMaxStages;  // a slot's 16 partials written (one arrival a thread)
  uint64_t* rempty = rfull + kRS;        // a slot's reduction read (one arrival a lane)
  float* red = reinterpret_cast<float*>(smem + kHead);  // [kRS][kCW][kOut]
  uint8_t* ring = reinterpret_cast<uint8_t*>(red + kRS * kCW * kOut);
  const uint32_t stage = kPassRows * stride;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, U = K / 64;
  const int passes = (N + kPassRows - 1) / kPassRows;
  const int p0 = int(int64_t(passes) * blockIdx.x / gridDim.x);
  const int my = int(int64_t(passes) * (blockIdx.x + 1) / gridDim.x) - p0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      bulk::bar_init(&full[s], 1);
      bulk::bar_init(&empty[s], kCW);
    }
    for (int r = 0; r < kRS; ++r) {
      bulk::bar_init(&rfull[r], kCW * 32);
      bulk::bar_init(&rempty[r], 32);
    }
    bulk::fence_barrier_init();
  }
  __syncthreads();
  bulk::grid_launch_dependents();
  if (my <= 0) return;
  if (warp == kCW) {  // producer warp: lane r copies row r of each pass (W is not the previous
    // grid's output, so the stream starts before it ends)
    bulk::produce_passes(W, N, rb, 0, U, U, UB, p0, my, ring, stride, S, full, empty, [] {});
    return;
  }
  bulk::grid_wait();  // X and Y belong to the previous grid until it is done
  const int g = lane / 4, t = lane % 4;
  // This warp's units and their B fragments. Past U (U < 16 XU) the unit is clamped to U - 1
  // with B = 0: finite weights times zero add nothing, and the loop below has no branch.
  int uu[XU];
  uint4 xb[XU][2];
#pragma unroll
  for (int j = 0; j < XU; ++j) {
    const int u = warp + kCW * j;
    uu[j] = min(u, U - 1);
#pragma unroll
    for (int h = 0; h < 2; ++h)
      xb[j][h] = u < U ? x_item(X, M, K, 8, ((2 * u + h) * 8 + g) * 4 + t) : make_uint4(0, 0, 0, 0);
  }
  // Q4_K: a warp's units share their quarter of a super-block (u % 4 == warp % 4).
  static_assert(kCW % 4 == 0, "Q4_K units of a warp share their quarter");
  const int c4 = warp % 4;
  // Pass q's reduction: by warp q % kCW, in warp order.
  auto reduce = [&](int q) {
    const int rs = q % kRS;
    bulk::bar_wait(&rfull[rs], uint32_t((q / kRS) & 1));
    const float* rr = red + rs * kCW * kOut;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int o = i * 32 + lane;
      float v = 0.0f;
#pragma unroll
      for (int w = 0; w < kCW; ++w) v += rr[w * kOut + o];
      store_frag_y(Y, M, N, p0 + q, o, v);
    }
    bulk::bar_arrive(&rempty[rs]);
  };
  for (int s = 0; s < my; ++s) {
    const int slot = s % S;
    bulk::bar_wait(&full[slot], uint32_t((s / S) & 1));
    const uint8_t* r0 = ring + size_t(slot) * stage + g * stride;
    tile::FragC16x8 acc[2] = {};  // per block h of a unit: two independent MMA chains
#pragma unroll
    for (int j = 0; j < XU; ++j) {
      UnitA A;
      load_unit<FMT>(r0, stride, uu[j], t, c4, A);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const tile::FragA16x16 a0{
            {A.frag[h][0][0], A.frag[h][1][0], A.frag[h][0][1], A.frag[h][1][1]}};
        const tile::FragA16x16 a1{
            {A.frag[h][0][2], A.frag[h][1][2], A.frag[h][0][3], A.frag[h][1][3]}};
        tile::mma_16816<tile::f16>(acc[h], a0, tile::FragB16x8{{xb[j][h].x, xb[j][h].y}});
        tile::mma_16816<tile::f16>(acc[h], a1, tile::FragB16x8{{xb[j][h].z, xb[j][h].w}});
      }
    }
    __syncwarp();
    if (lane == 0) bulk::bar_arrive(&empty[slot]);
    const int rs = s % kRS;
    if (s >= kRS) bulk::bar_wait(&rempty[rs], uint32_t((s / kRS - 1) & 1));
    float* rw = red + (rs * kCW + warp) * kOut;
#pragma unroll
    for (int i = 0; i < 4; ++i) rw[i * 32 + lane] = acc[0].r[i] + acc[1].r[i];
    bulk::bar_arrive(&rfull[rs]);
    // One pass late, so that the reducing warp rarely waits for the slowest warp.
    if (s >= 1 && (s - 1) % kCW == warp) reduce(s - 1);
  }
  if ((my - 1) % kCW == warp) reduce(my - 1);
}

template <int FMT, int XU>
tc_status_t launch_fmt(const Args& a, const Geo& g, cudaStream_t s) {
  auto* kernel = mma_xreg_kernel<FMT, XU>;
  if (const tc_status_t st = allow_smem(reinterpret_cast<const void*>(kernel), kSmemCap);
      st != TC_SUCCESS)
    return st;
  const int passes = (a.N + kPassRows - 1) / kPassRows;
  const cudaError_t e = launch_ex(kernel, dim3(unsigned(std::max(1, std::min(passes, sm_count())))),
                                  dim3((kCW + 1) * 32), g.smem, s, 1, a.pdl,
                                  static_cast<const uint8_t*>(a.w), static_cast<const float*>(a.x),
                                  a.y, a.M, a.N, a.K, uint32_t(w_row_bytes(a)), g.stride, g.S);
  return e == cudaSuccess ? launched("quant mma f16 xreg kernel launch")
                          : cuda_fail(e, "quant mma f16 xreg kernel launch");
}

}  // namespace

bool mma_f16_xreg_fits(const Args& a) {
  const char* v = std::getenv("TC_QUANT_F16_XREG");
  if (v && std::strcmp(v, "0") == 0) return false;
  if (a.M < 1 || a.M > 8 || a.K < 256 || a.K % 256 != 0 || a.K / 64 > kCW * kMaxXU) return false;
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q8_0 && a.w_dtype != TC_DTYPE_Q4_K)
    return false;
  return geometry(a).S >= 2;
}

tc_status_t launch_mma_f16_xreg(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  const Geo g = geometry(a);
  return with_format(a.w_dtype, [&](auto f) {
    constexpr int F = decltype(f)::value;
    switch (g.XU) {
      case 1:
        return launch_fmt<F, 1>(a, g, s);
      case 2:
        return launch_fmt<F, 2>(a, g, s);
      case 3:
        return launch_fmt<F, 3>(a, g, s);
      default:
        return launch_fmt<F, 4>(a, g, s);
    }
  });
}

}  // namespace tc::cuda::quant
