// Decode GEMV, M <= 4, 8-bit activations, Q4_0 / Q8_0 / Q4_K with 16-byte-multiple rows:
// weights streamed by 1-D bulk copies through a ring of shared-memory stages (quant_bulk.cuh),
// decoded from shared memory with conflict-free 4/16-byte loads, dp4a dots (quant_kernels.h:
// launch_gemv_bulk).
//
// Why: the older GEMVs let each lane load its own 18/34/144-byte block with small loads, so the
// L1/LSU passes, not HBM, set the rate (40-63% of the copy bandwidth). Here one producer lane
// per CTA keeps S stages of R whole rows (~20 KB each, ~90 KB) in flight with one bulk copy per
// stage, and a persistent grid of one CTA per SM walks a contiguous range of row tiles. The CTA
// fits twice on an SM (<= 113 KB shared memory), so under programmatic dependent launch the
// next GEMV's CTA starts its weight stream while this one drains.
//
// Work unit: 64 weights of a row (a pair of Q4_0 / Q8_0 blocks: 36 / 68 bytes, 9 / 17 words at
// a 9 / 17-word stride, so 32 lanes hit 32 banks; a Q4_K chunk: 16-byte header + 32 quant
// bytes, 144-byte stride, 4 banks apart per block). X is quantized per 32 to int8 by the
// consumer warps while the first stages land, stored per unit as 4 int4 chunks [m][chunk][unit]
// (lanes on consecutive units read consecutive 16 bytes) and {d0, d1, sum0, sum1} per unit.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>

#include "cuda/gemv_quant_units.cuh"
#include "cuda/quant_bulk.cuh"
#include "cuda/quant_launch.cuh"

namespace tc::cuda::quant {
namespace {

// Consumer warps (8, 12 or 16: Config below); one more warp is the producer.
template <int CW>
constexpr int kThreadsOf = (CW + 1) * 32;
constexpr int kMaxStages = 8;
constexpr int kMaxM = 4;
constexpr size_t kSmemCap1 = 200 * 1024;  // one CTA per SM
constexpr size_t kSmemCap2 = 113 * 1024;  // two CTAs per SM (the next PDL grid's beside it)
constexpr size_t kHead = 128;             // the barriers
constexpr uint32_t kM4 = 0x0F0F0F0Fu;

struct Config;

struct Geo {
  int R = 0, RP = 2, S = 0;  // rows per stage and per warp, stages (a multiple of the groups)
  size_t stage = 0, smem = 0;
};

__device__ __forceinline__ int dot4(int4 x, uint32_t a, uint32_t b, uint32_t c, uint32_t d, int s) {
  s = __dp4a(int(a), x.x, s);
  s = __dp4a(int(b), x.y, s);
  s = __dp4a(int(c), x.z, s);
  return __dp4a(int(d), x.w, s);
}

// X rows 0..MT-1 at unit u, held in registers while the warp dots them with two weight rows.
template <int MT>
struct XUnit {
  int4 c[MT][4];  // the unit's 64 int8 values, 16 per int4
  int4 s[MT];     // {d0, d1, sum0, sum1} of its two 32-blocks
};

template <int MT>
__device__ __forceinline__ void load_x(XUnit<MT>& x, int u, int U, int M,
                                       const int4* __restrict__ xq, const int4* __restrict__ xm) {
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    if (m >= M) break;
    const int4* xc = xq + size_t(m) * 4 * U + u;
    x.c[m][0] = xc[0];
    x.c[m][1] = xc[U];
    x.c[m][2] = xc[2 * U];
    x.c[m][3] = xc[3 * U];
    x.s[m] = xm[m * U + u];
  }
}

// acc[m] += this unit's 64 weights of the row times X row m's unit (x).
template <int FMT, int MT>
__device__ __forceinline__ void unit_dot(const uint8_t* row, int u, int M, const XUnit<MT>& x,
                                         float* acc) {
  if constexpr (FMT == kQ4_0) {  // blocks 2u (bytes 0..17) and 2u+1 (18..35)
    const uint32_t* p = reinterpret_cast<const uint32_t*>(row + 36 * u);
    uint32_t w[9];
#pragma unroll
    for (int i = 0; i < 9; ++i) w[i] = p[i];
    const float d0 = h2f(uint16_t(w[0])), d1 = h2f(uint16_t(w[4] >> 16));
    uint32_t q0[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) q0[i] = __funnelshift_r(w[i], w[i + 1], 16);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m >= M) break;
      const int4 x0 = x.c[m][0], x1 = x.c[m][1], x2 = x.c[m][2], x3 = x.c[m][3], xs = x.s[m];
      // Element e < 16 of a block is the low nibble of qs[e], e >= 16 the high one of qs[e-16].
      int s0 = dot4(x0, q0[0] & kM4, q0[1] & kM4, q0[2] & kM4, q0[3] & kM4, 0);
      s0 = dot4(x1, (q0[0] >> 4) & kM4, (q0[1] >> 4) & kM4, (q0[2] >> 4) & kM4, (q0[3] >> 4) & kM4,
                s0);
      int s1 = dot4(x2, w[5] & kM4, w[6] & kM4, w[7] & kM4, w[8] & kM4, 0);
      s1 = dot4(x3, (w[5] >> 4) & kM4, (w[6] >> 4) & kM4, (w[7] >> 4) & kM4, (w[8] >> 4) & kM4, s1);
      acc[m] += d0 * __int_as_float(xs.x) * float(s0 - 8 * xs.z) +
                d1 * __int_as_float(xs.y) * float(s1 - 8 * xs.w);
    }
  } else if constexpr (FMT == kQ8_0) {  // blocks 2u (bytes 0..33) and 2u+1 (34..67)
    const uint32_t* p = reinterpret_cast<const uint32_t*>(row + 68 * u);
    uint32_t w[17];
#pragma unroll
    for (int i = 0; i < 17; ++i) w[i] = p[i];
    const float d0 = h2f(uint16_t(w[0])), d1 = h2f(uint16_t(w[8] >> 16));
    uint32_t q0[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) q0[i] = __funnelshift_r(w[i], w[i + 1], 16);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m >= M) break;
      const int4 x0 = x.c[m][0], x1 = x.c[m][1], x2 = x.c[m][2], x3 = x.c[m][3], xs = x.s[m];
      int s0 = dot4(x0, q0[0], q0[1], q0[2], q0[3], 0);
      s0 = dot4(x1, q0[4], q0[5], q0[6], q0[7], s0);
      int s1 = dot4(x2, w[9], w[10], w[11], w[12], 0);
      s1 = dot4(x3, w[13], w[14], w[15], w[16], s1);
      acc[m] += d0 * __int_as_float(xs.x) * float(s0) + d1 * __int_as_float(xs.y) * float(s1);
    }
  } else {  // Q4_K: super-block u / 4, chunk c = u % 4: sub-blocks 2c (low), 2c + 1 (high)
    const uint8_t* blk = row + 144 * (u >> 2);
    const int c = u & 3;
    const uint4 head = *reinterpret_cast<const uint4*>(blk);
    const uint4 qa = *reinterpret_cast<const uint4*>(blk + 16 + 32 * c);
    const uint4 qb = *reinterpret_cast<const uint4*>(blk + 32 + 32 * c);
    const float d = h2f(uint16_t(head.x)), dmin = h2f(uint16_t(head.x >> 16));
    int sc0, m0, sc1, m1;
    q4k_scale_min_words(2 * c, head.y, head.z, head.w, &sc0, &m0);
    q4k_scale_min_words(2 * c + 1, head.y, head.z, head.w, &sc1, &m1);
    const float ds0 = d * float(sc0), ds1 = d * float(sc1);
    const float dm0 = dmin * float(m0), dm1 = dmin * float(m1);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m >= M) break;
      const int4 x0 = x.c[m][0], x1 = x.c[m][1], x2 = x.c[m][2], x3 = x.c[m][3], xs = x.s[m];
      int s0 = dot4(x0, qa.x & kM4, qa.y & kM4, qa.z & kM4, qa.w & kM4, 0);
      s0 = dot4(x1, qb.x & kM4, qb.y & kM4, qb.z & kM4, qb.w & kM4, s0);
      int s1 =
          dot4(x2, (qa.x >> 4) & kM4, (qa.y >> 4) & kM4, (qa.z >> 4) & kM4, (qa.w >> 4) & kM4, 0);
      s1 = dot4(x3, (qb.x >> 4) & kM4, (qb.y >> 4) & kM4, (qb.z >> 4) & kM4, (qb.w >> 4) & kM4, s1);
      acc[m] += __int_as_float(xs.x) * (ds0 * float(s0) - dm0 * float(xs.z)) +
                __int_as_float(xs.y) * (ds1 * float(s1) - dm1 * float(xs.w));
    }
  }
}

// X (M rows) to int8 per 32 (scale amax / 127, round to nearest, as in gemv_quant_q8.cu) into
// the unit layout, by all `threads` threads: four lanes per unit, each 16 values (one int4
// chunk), a 32-block's amax and sum shared by a lane pair, so the L2 round trip of X and the
// arithmetic after it are spread over 4x more threads than one unit per thread.
__device__ __forceinline__ void quantize_x(const float* __restrict__ X, int M, int K, int U,
                                           int threads, int4* xq, int4* xm) {
  const int total = M * U * 4;  // a multiple of 4: the lanes of a unit are all in or all out
  for (int i0 = 0; i0 < total; i0 += threads) {
    const int i = i0 + int(threadIdx.x);
    const bool ok = i < total;
    const int j = i & 3, u = (i >> 2) % U, m = (i >> 2) / U;
    float4 v[4] = {};
    float amax = 0.0f;
    if (ok) {
      const float4* src = reinterpret_cast<const float4*>(X + size_t(m) * K + 64 * u + 16 * j);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        v[e] = __ldg(src + e);
        amax = fmaxf(
            amax, fmaxf(fmaxf(fabsf(v[e].x), fabsf(v[e].y)), fmaxf(fabsf(v[e].z), fabsf(v[e].w))));
      }
    }
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));  // the 32-block's two lanes
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    int wq[4], sum = 0;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int q0 = __float2int_rn(v[e].x * id), q1 = __float2int_rn(v[e].y * id);
      const int q2 = __float2int_rn(v[e].z * id), q3 = __float2int_rn(v[e].w * id);
      sum += q0 + q1 + q2 + q3;
      wq[e] = int((q0 & 255) | ((q1 & 255) << 8) | ((q2 & 255) << 16) | (uint32_t(q3 & 255) << 24));
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    const float d = amax / 127.0f;
    const float d1 = __shfl_xor_sync(0xffffffffu, d, 2);  // lane j + 2: the unit's 2nd block
    const int s1 = __shfl_xor_sync(0xffffffffu, sum, 2);
    if (ok) {
      xq[(size_t(m) * 4 + j) * U + u] = make_int4(wq[0], wq[1], wq[2], wq[3]);
      if (j == 0) xm[m * U + u] = make_int4(__float_as_int(d), __float_as_int(d1), sum, s1);
    }
  }
}

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

template <int FMT, int MT, int kCW, int kMinBlocks>
__global__ void __launch_bounds__(kThreadsOf<kCW>, kMinBlocks)
    bulk_gemv_kernel(const uint8_t* __restrict__ W, const float* __restrict__ X,
                     float* __restrict__ Y, int M, int N, int K, uint32_t rb, int R, int RP,
                     int S) {
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
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
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      bulk::bar_init(&full[s], 1);
      bulk::bar_init(&empty[s], uint32_t(RW));
    }
    bulk::fence_barrier_init();
  }
  __syncthreads();
  bulk::grid_launch_dependents();
  if (warp == kCW) {  // producer: W is never written by the previous grid (launch_gemv_bulk)
    if (lane == 0) {
      for (int s = 0; s < my; ++s) {
        const int slot = s % S;
        if (s >= S) bulk::bar_wait(&empty[slot], uint32_t((s / S - 1) & 1));
        const int64_t row0 = int64_t(t0 + s) * R;
        const uint32_t bytes = uint32_t(N - row0 < R ? N - row0 : R) * rb;
        bulk::bar_expect_tx(&full[slot], bytes);
        bulk::copy(ring + slot * stage, W + row0 * rb, bytes, &full[slot]);
      }
    }
    return;
  }
  bulk::grid_wait();  // X and Y belong to the previous grid until it is done
  quantize_x(X, M, K, U, kCW * 32, xq, xm);
  bulk::sync_consumers(kCW * 32);
  const int group = warp / RW, wr = warp % RW;
  if (group >= NG) return;  // fewer stages than groups: these warps only quantized X
  for (int s = group; s < my; s += NG) {
    const int slot = s % S;
    bulk::bar_wait(&full[slot], uint32_t((s / S) & 1));
    const int64_t row0 = int64_t(t0 + s) * R;
    const int rows = int(N - row0 < R ? N - row0 : R);
    for (int r = RP * wr; r < rows; r += RP * RW) {  // rows r and r + 1 share the X loads
      const uint8_t* row = ring + slot * stage + size_t(r) * rb;
      const bool two = RP == 2 && r + 1 < rows;
      float acc[2][MT] = {};
#pragma unroll 2
      for (int u = lane; u < U; u += 32) {
        XUnit<MT> x;
        load_x<MT>(x, u, U, M, xq, xm);
        unit_dot<FMT, MT>(row, u, M, x, acc[0]);
        if (two) unit_dot<FMT, MT>(row + rb, u, M, x, acc[1]);
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
}

// Configurations (grid: one CTA per SM): 16 consumer warps and up to ~200 KB of ring (default);
// or, for an A/B, TC_QUANT_BULK_CTAS=2 (12 warps, <= 113 KB, so that the next PDL grid's CTA
// fits beside this one and starts its weight stream before this one ends) or
// TC_QUANT_BULK_WARPS=8 (8 warps, up to ~200 KB).
struct Config {
  int warps, ctas;
  size_t cap;
};
Config config(int M) {
  const char* c = std::getenv("TC_QUANT_BULK_CTAS");
  const char* w = std::getenv("TC_QUANT_BULK_WARPS");
  if (M == 1 && c && c[0] == '2') return {12, 2, kSmemCap2};
  if (M > 1 || (w && w[0] == '8')) return {8, 1, kSmemCap1};  // M > 1: registers for X
  return {16, 1, kSmemCap1};
}

Geo geometry(const Args& a, int mt, const Config& c) {
  Geo g;
  const size_t rb = w_row_bytes(a);
  const size_t stage_cap = c.cap < kSmemCap1 ? 20 * 1024 : 32 * 1024;
  g.R = 1;
  while (g.R < 32 && 2 * g.R * rb <= stage_cap) g.R *= 2;
  g.stage = g.R * rb;
  const size_t x = size_t(mt) * (size_t(a.K) + size_t(a.K) / 4);
  const size_t left = c.cap > kHead + x ? c.cap - kHead - x : 0;
  const int S = int(std::min<size_t>(kMaxStages, left / g.stage));
  // Row pairs, unless single rows keep more warps busy (wide rows: few rows, few stages).
  int best = -1;
  for (int rp : {2, 1}) {
    if (S <= 0) break;
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

template <int FMT, int MT, int CW, int MINB>
tc_status_t launch_fmt(const Args& a, const Config& c, cudaStream_t s) {
  auto* kernel = bulk_gemv_kernel<FMT, MT, CW, MINB>;
  const Geo g = geometry(a, MT, c);
  if (const tc_status_t st = allow_smem(reinterpret_cast<const void*>(kernel), kSmemCap1);
      st != TC_SUCCESS)
    return st;
  const int64_t tiles = (int64_t(a.N) + g.R - 1) / g.R;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(std::min<int64_t>(tiles, sm_count())));
  cfg.blockDim = dim3(kThreadsOf<CW>);
  cfg.dynamicSmemBytes = g.smem;
  cfg.stream = s;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = a.pdl ? 1 : 0;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, static_cast<const uint8_t*>(a.w),
                                           static_cast<const float*>(a.x), a.y, a.M, a.N, a.K,
                                           uint32_t(w_row_bytes(a)), g.R, g.RP, g.S);
  return e == cudaSuccess ? launched("quant bulk gemv kernel launch")
                          : cuda_fail(e, "quant bulk gemv kernel launch");
}

template <int FMT>
tc_status_t launch_m(const Args& a, cudaStream_t s) {
  const Config c = config(a.M);
  if (a.M == 1) {
    if (c.ctas == 2) return launch_fmt<FMT, 1, 12, 2>(a, c, s);
    return c.warps == 8 ? launch_fmt<FMT, 1, 8, 1>(a, c, s) : launch_fmt<FMT, 1, 16, 1>(a, c, s);
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
  if (geometry(a, a.M <= 2 ? a.M : kMaxM, config(a.M)).S < 2)
    return (why = "X and two stages do not fit in shared memory", false);
  const auto align = reinterpret_cast<uintptr_t>(a.w) | reinterpret_cast<uintptr_t>(a.x);
  if (align % 16 != 0) return (why = "W or X not 16-byte aligned", false);
  return true;
}

tc_status_t launch_gemv_bulk(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (a.w_dtype) {
    case TC_DTYPE_Q4_0:
      return launch_m<kQ4_0>(a, s);
    case TC_DTYPE_Q8_0:
      return launch_m<kQ8_0>(a, s);
    default:
      return launch_m<kQ4_K>(a, s);
  }
}

}  // namespace tc::cuda::quant
