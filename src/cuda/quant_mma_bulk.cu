// Batched decode, M <= 32, 8-bit activations: int8 tensor cores (mma.sync m16n8k32 s8) on
// weights streamed by 1-D bulk copies (quant_kernels.h: launch_mma_bulk).
//
// Two kernels. The first quantizes X (f32, f16 or bf16: a runtime kind, XKind; half X is widened
// to f32 as loaded, so the codes are those of X widened to f32) per 32 to int8 (scale amax / 127,
// as every q8 row) into the caller's workspace: int8 rows [M][K] and per block and column {d,
// sum} [K/32][8 NT]. The second, a persistent grid of one CTA per SM, copies that once into shared
// memory and streams its range of 16-row passes through a ring of stages (16 rows x a K chunk, one
// bulk copy per row, rows padded to an odd multiple of 16 bytes so the 8 row groups of a fragment
// load fall on distinct banks). The consumer warps split the units of each chunk; at the end of a
// pass their sums meet in shared memory. Per 32-element block the MMA gets the block's raw quants
// as int8 (Q4 nibbles 0..15, Q8_0 bytes): A = 16 weight rows x 32 k, B = 32 k x 8 activation rows;
// the int32 result is scaled per (row, column) by d_w * d_x, Q4_0's -8 and Q4_K's mins go through
// the x sums. Each weight byte is read once for the whole batch, so batch 8 moves nearly the bytes
// of batch 1. Where X of all K does not fit beside the ring (M K large), K is split over a few
// launches, the later ones adding to Y. The main kernel always uses programmatic dependent
// launch: its weight stream starts while the previous kernel runs (the quantize kernel or a
// split before it; neither writes W); X and Y wait for it.
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/gemm_launch_pdl.h"
#include "cuda/quant_bulk.cuh"
#include "cuda/quant_launch.cuh"
#include "cuda/quant_mma_bulk_units.cuh"

namespace tc::cuda::quant {
namespace {

using namespace mma_bulk;

// Consumer warps: 16 (the first H200 run had 8 for one column tile: latency-bound, ~1.2 TB/s);
// one more warp is the producer.
__host__ __device__ constexpr int consumer_warps(int) {
  return 16;
}
constexpr int kPassRows = 16;  // one m16 tile of weight rows; all consumer warps split its K
constexpr int kMaxStages = 8;
constexpr size_t kSmemCap = 220 * 1024;
constexpr size_t kHead = 256;  // barriers

// A unit is 64 weights of a row: two Q4_0 / Q8_0 blocks, a quarter of a Q4_K super-block.
__host__ __device__ constexpr int unit_bytes(int fmt) {
  return fmt == kQ8_0 ? 68 : 36;
}
// ~2.2 KB per row and stage: one bulk copy per row, and the first H200 run suggested that the
// copies' count, not their bytes, limited 576-byte copies (~1.3 TB/s whatever the batch).
__host__ __device__ constexpr int units_per_chunk(int fmt) {
  return fmt == kQ8_0 ? 32 : 64;
}

// X of one K split must sit in shared memory beside the ring: K is cut into the fewest equal
// splits (multiples of 256) that leave room for 3 stages if that takes at most 2 splits, else
// for 2 (~74 KB in flight). Each split is one launch of the main kernel over all rows; the
// ones after the first add to Y.
constexpr int kMinStages = 2;

struct Geo {
  int NT = 1, S = 0, splits = 1, Ks = 0;  // Ks: K of a split (the last may be shorter)
  uint32_t chunk = 0, stride = 0;         // bytes of a row's chunk, and its padded slot
  size_t smem = 0, work = 0;
};

Geo geometry(const Args& a) {
  Geo g;
  const int fmt = format_code(a.w_dtype);
  g.NT = a.M <= 8 ? 1 : a.M <= 16 ? 2 : 4;
  g.chunk = uint32_t(units_per_chunk(fmt) * unit_bytes(fmt));
  g.stride = g.chunk + ((g.chunk / 16) % 2 == 0 ? 16 : 0);  // an odd number of 16-byte lines
  const size_t cols = 8 * g.NT;
  g.work = size_t(a.M) * a.K + size_t(a.K / 32) * cols * 8;
  const size_t stage = size_t(kPassRows) * g.stride;
  const size_t red = size_t(consumer_warps(g.NT)) * g.NT * 4 * 32 * 4;
  const int pieces = a.K / 256;
  auto fit = [&](int splits, Geo* out) {
    *out = g;
    out->Ks = (pieces + splits - 1) / splits * 256;
    const size_t fixed =
        kHead + cols * (size_t(out->Ks) + 16) + size_t(out->Ks / 32) * cols * 8 + red;
    out->S = fixed < kSmemCap ? int(std::min<size_t>(kMaxStages, (kSmemCap - fixed) / stage)) : 0;
    out->smem = fixed + out->S * stage;
    out->splits = (a.K + out->Ks - 1) / out->Ks;
  };
  Geo s2, s3;  // the fewest splits leaving room for 2 and for 3 stages
  for (int splits = 1; splits <= pieces && s3.S < 3; ++splits) {
    Geo t;
    fit(splits, &t);
    if (t.S >= 2 && s2.S < 2) s2 = t;
    if (t.S >= 3) s3 = t;
  }
  if (s3.S >= 3 && s3.splits <= std::max(s2.splits, 2)) return s3;
  s2.work = g.work;
  return s2;
}

// Quantizes X (M rows, kind xk) per 32 into the workspace: int8 [M][K], then {d, sum}
// [K/32][8 NT] (zero for the columns M .. 8 NT - 1, which the MMA computes and nobody reads).
__global__ void quantize_x_kernel(const void* __restrict__ X, int xk, int8_t* __restrict__ xq,
                                  int2* __restrict__ meta, int M, int K, int cols) {
  bulk::grid_wait();  // X is the previous grid's output
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int g = i / cols, n = i % cols;
  if (g < K / 32) {
    if (n >= M) {
      meta[i] = make_int2(0, 0);
    } else {
      const size_t e = size_t(n) * K + 32 * g;
      float4 v[8];
      float amax = 0.0f;
      if (xk == kXF32) {
        const float4* src = reinterpret_cast<const float4*>(static_cast<const float*>(X) + e);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = __ldg(src + j);
      } else {  // 32 halves: four 16-byte loads
        const uint4* src = reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(X) + e);
#pragma unroll
        for (int j = 0; j < 4; ++j) widen_x8(__ldg(src + j), xk, v[2 * j], v[2 * j + 1]);
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) amax = fmaxf(amax, amax4(v[j]));
      const float id = q8_inv_scale(amax);
      int w[8], sum = 0;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        w[j] = q8_pack4(v[j], id, sum);
      }
      int4* dst = reinterpret_cast<int4*>(xq + size_t(n) * K + 32 * g);
      dst[0] = make_int4(w[0], w[1], w[2], w[3]);
      dst[1] = make_int4(w[4], w[5], w[6], w[7]);
      meta[i] = make_int2(__float_as_int(amax / 127.0f), sum);
    }
  }
  bulk::grid_launch_dependents();
}

template <int FMT, int NT>
__global__ void __launch_bounds__((consumer_warps(NT) + 1) * 32, 1)
    mma_bulk_kernel(const uint8_t* __restrict__ W, const int8_t* __restrict__ xq_g,
                    const int2* __restrict__ meta_g, float* __restrict__ Y, int M, int N, int K,
                    int k0, int Kfull, bool accumulate, uint32_t rb, uint32_t stride, int S) {
  // This launch: columns k0 .. k0 + K of W and X (a split of Kfull); W, xq_g, meta_g are
  // the whole matrices.
  constexpr int UC = units_per_chunk(FMT), UB = unit_bytes(FMT), COLS = 8 * NT;
  constexpr int kCW = consumer_warps(NT), KW = kCW;  // KW warps split K per row group
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  uint64_t* xbar = empty + kMaxStages;
  const int U = K / 64, G = K / 32, XS = K + 16;
  int8_t* xs = reinterpret_cast<int8_t*>(smem + kHead);            // [COLS][XS]
  int2* meta = reinterpret_cast<int2*>(xs + size_t(COLS) * XS);    // [G][COLS]
  float* red = reinterpret_cast<float*>(meta + size_t(G) * COLS);  // [kCW][NT * 4][32]
  uint8_t* ring = reinterpret_cast<uint8_t*>(red + kCW * NT * 4 * 32);
  const uint32_t stage = kPassRows * stride;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int CH = (U + UC - 1) / UC;  // chunks (stages) per pass
  const int64_t passes = (int64_t(N) + kPassRows - 1) / kPassRows;
  const int p0 = int(passes * blockIdx.x / gridDim.x);
  const int my = (int(passes * (blockIdx.x + 1) / gridDim.x) - p0) * CH;
  if (threadIdx.x == 0) bulk::init_ring(full, empty, S, kCW, xbar);
  __syncthreads();
  bulk::grid_launch_dependents();
  if (warp == kCW) {  // producer warp: lane r copies row r of each stage; once the first
    // stages are in flight, X (the quantize kernel's output) after the previous grid
    bulk::produce_passes(
        W, N, rb, size_t(k0 / 64) * UB, U, UC, UB, p0, my, ring, stride, S, full, empty, [&] {
          bulk::grid_wait();
          const uint32_t mbytes = uint32_t(G) * COLS * 8;
          if (lane == 0) bulk::bar_expect_tx(xbar, uint32_t(M) * K + mbytes);
          __syncwarp();
          if (lane < M)
            bulk::copy(xs + size_t(lane) * XS, xq_g + size_t(lane) * Kfull + k0, K, xbar);
          if (lane == 0) bulk::copy(meta, meta_g + size_t(k0 / 32) * COLS, mbytes, xbar);
        });
    return;
  }
  bulk::grid_wait();  // Y: the previous grids are done before any write
  const int rg = warp / KW, wk = warp % KW, g = lane / 4, t = lane % 4;
  float acc[NT][4] = {};
  bulk::bar_wait(xbar, 0);
  for (int s = 0; s < my; ++s) {
    const int slot = s % S, ch = s % CH;
    bulk::bar_wait(&full[slot], uint32_t((s / S) & 1));
    const int u0 = ch * UC, uc = min(UC, U - u0);
    const uint8_t* r0 = ring + slot * stage + (16 * rg + g) * stride;
#pragma unroll 2
    for (int u = wk; u < uc; u += KW) {
      BlockA blk[2];
      load_unit<FMT>(r0, stride, u, t, blk);
      const int ug = u0 + u;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int8_t* xr = xs + size_t(8 * nt + g) * XS + 64 * ug + 4 * t;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t b0 = ld32(reinterpret_cast<const uint8_t*>(xr + 32 * h));
          const uint32_t b1 = ld32(reinterpret_cast<const uint8_t*>(xr + 32 * h + 16));
          // {d, sum} of columns 2t and 2t + 1 of this tile, block 2 ug + h.
          const int4 mx =
              *reinterpret_cast<const int4*>(meta + size_t(2 * ug + h) * COLS + 8 * nt + 2 * t);
          int c[4];
          mma_s8(c, blk[h].a[0], blk[h].a[1], blk[h].a[2], blk[h].a[3], b0, b1);
          const float dx[2] = {__int_as_float(mx.x), __int_as_float(mx.z)};
          const int sx[2] = {mx.y, mx.w};
#pragma unroll
          for (int i = 0; i < 4; ++i) {  // C row g + 8 (i / 2), column 2t + i % 2
            const int r = i >> 1, col = i & 1;
            if constexpr (FMT == kQ4_0) {
              acc[nt][i] += blk[h].d[r] * dx[col] * float(c[i] - 8 * sx[col]);
            } else if constexpr (FMT == kQ8_0) {
              acc[nt][i] += blk[h].d[r] * dx[col] * float(c[i]);
            } else {
              acc[nt][i] += dx[col] * (blk[h].d[r] * float(c[i]) - blk[h].mn[r] * float(sx[col]));
            }
          }
        }
      }
    }
    __syncwarp();
    if (lane == 0) bulk::bar_arrive(&empty[slot]);
    if (ch == CH - 1) {  // pass done: the K-split warps of each row group meet
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          red[(warp * NT * 4 + nt * 4 + i) * 32 + lane] = acc[nt][i];
          acc[nt][i] = 0.0f;
        }
      bulk::sync_consumers(kCW * 32);
      // Output o = (nt * 4 + i) * 32 + lane of the fragment: one thread each sums the warps'
      // partials in warp order (deterministic).
      for (int o = threadIdx.x; o < NT * 4 * 32; o += kCW * 32) {
        float v = 0.0f;
        for (int w = 0; w < KW; ++w) v += red[w * NT * 4 * 32 + o];
        const int i = (o / 32) % 4, nt = o / 128, l = o % 32;
        const int64_t row = int64_t(p0 + s / CH) * kPassRows + l / 4 + 8 * (i >> 1);
        const int n = 8 * nt + 2 * (l % 4) + (i & 1);
        if (n < M && row < N) {
          float* y = Y + size_t(n) * N + row;
          *y = accumulate ? *y + v : v;
        }
      }
      bulk::sync_consumers(kCW * 32);
    }
  }
}

template <int FMT, int NT>
tc_status_t launch_main(const Args& a, const Geo& g, int k0, cudaStream_t s) {
  auto* kernel = mma_bulk_kernel<FMT, NT>;
  if (const tc_status_t st = allow_smem(reinterpret_cast<const void*>(kernel), kSmemCap);
      st != TC_SUCCESS)
    return st;
  const int64_t passes = (int64_t(a.N) + kPassRows - 1) / kPassRows;
  const auto* xq = static_cast<const int8_t*>(a.work);
  const auto* meta = reinterpret_cast<const int2*>(xq + size_t(a.M) * a.K);
  // Always PDL: its wait orders it after the X quantizer (or the previous K slice) before it
  // reads their output, while its weight stream starts at once.
  const cudaError_t e =
      launch_ex(kernel, dim3(unsigned(std::min<int64_t>(passes, sm_count()))),
                dim3((consumer_warps(NT) + 1) * 32), g.smem, s, 1, true,
                static_cast<const uint8_t*>(a.w), xq, meta, a.y, a.M, a.N, std::min(g.Ks, a.K - k0),
                k0, a.K, k0 > 0, uint32_t(w_row_bytes(a)), g.stride, g.S);
  return e == cudaSuccess ? launched("quant mma bulk kernel launch")
                          : cuda_fail(e, "quant mma bulk kernel launch");
}

template <int FMT>
tc_status_t launch_fmt(const Args& a, const Geo& g, cudaStream_t s) {
  for (int k0 = 0; k0 < a.K; k0 += g.Ks) {
    const tc_status_t st = g.NT == 1   ? launch_main<FMT, 1>(a, g, k0, s)
                           : g.NT == 2 ? launch_main<FMT, 2>(a, g, k0, s)
                                       : launch_main<FMT, 4>(a, g, k0, s);
    if (st != TC_SUCCESS) return st;
  }
  return TC_SUCCESS;
}

}  // namespace

size_t mma_bulk_work_bytes(const Args& a) {
  return geometry(a).work;
}

bool mma_bulk_supports(const Args& a, std::string& why) {
  if (!bulk_mma_problem_ok(a, why)) return false;
  const Geo g = geometry(a);
  if (g.S < kMinStages) return (why = "X and the stages do not fit in shared memory", false);
  return bulk_mma_buffers_ok(a, g.work, "the quantized X", why);
}

tc_status_t launch_mma_bulk(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  const Geo g = geometry(a);
  auto* xq = static_cast<int8_t*>(a.work);
  auto* meta = reinterpret_cast<int2*>(xq + size_t(a.M) * a.K);
  const int cols = 8 * g.NT, items = (a.K / 32) * cols;
  const cudaError_t e = launch_ex(quantize_x_kernel, dim3(unsigned((items + 255) / 256)), dim3(256),
                                  0, s, 1, a.pdl, a.x, x_kind(a.x_dtype), xq, meta, a.M, a.K, cols);
  if (e != cudaSuccess) return cuda_fail(e, "quant mma bulk: X quantize launch");
  return with_format(a.w_dtype, [&](auto f) { return launch_fmt<decltype(f)::value>(a, g, s); });
}

}  // namespace tc::cuda::quant
