// Decode GEMV, M <= 8, f32 activations kept in f32: Q4_0, Q8_0, Q4_K (quant_kernels.h).
//
// A persistent grid (as many CTAs as fit at once); each CTA first stages X in shared memory
// transposed by 32-element group (float4 index (m*8 + j/4)*G + g), so that the 32 lanes of a
// warp, which work on 32 consecutive groups, read 32 consecutive float4: no bank conflicts.
// A warp then takes R weight rows at a time (R = 4 for Q4_0 at M = 1, else 2) so that each x
// value read from shared memory serves R rows; a lane loads its group of each row (the next
// group's bytes already in flight while this one is computed), decodes four elements at a time
// into exact small integers (0x4B000000 | q is the float 2^23 + q) and applies the block scale
// once per group. Q4_K lanes take 64-element chunks (two sub-blocks sharing 32 bytes of
// nibbles) and subtract min * sum(x), with the group sums staged beside X.
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/gemv_quant_units.cuh"
#include "cuda/quant_launch.cuh"

namespace tc::cuda::quant {
namespace {

constexpr int kThreads = 512;
constexpr int kMaxM = 8;
constexpr size_t kMaxSmem = 160 * 1024;

// Rows per warp: 4 where the registers allow it (Q4_0 at M = 1), else 2.
template <int FMT, int MMAX>
constexpr int kRowsPerWarp = MMAX == 1 && FMT == kQ4_0 ? 4 : 2;

template <int FMT, int MMAX>
__global__ void __launch_bounds__(kThreads)
    gemv_kernel(const uint8_t* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y,
                int M, int N, int K, size_t row_bytes) {
  constexpr int R = kRowsPerWarp<FMT, MMAX>;
  constexpr int H = Unit<FMT>::H;
  extern __shared__ float4 xs[];
  const int G = K / 32;
  float* xsum = reinterpret_cast<float*>(xs + size_t(M) * 8 * G);  // [M][G]
  const float4* x4 = reinterpret_cast<const float4*>(X);
  for (int i = threadIdx.x; i < M * 8 * G; i += kThreads) {
    const int m = i / (8 * G), r = i % (8 * G);
    xs[(size_t(m) * 8 + r % 8) * G + r / 8] = __ldg(x4 + i);
  }
  __syncthreads();
  if (FMT == kQ4_K) {
    for (int i = threadIdx.x; i < M * G; i += kThreads) {
      const int m = i / G, g = i % G;
      float s = 0.0f;
      for (int j4 = 0; j4 < 8; ++j4) {
        const float4 v = xs[(size_t(m) * 8 + j4) * G + g];
        s += (v.x + v.y) + (v.z + v.w);
      }
      xsum[i] = s;
    }
    __syncthreads();
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = kThreads / 32;
  const int units = G / H;
  for (int n0 = (blockIdx.x * warps + warp) * R; n0 < N; n0 += gridDim.x * warps * R) {
    const uint8_t* rows[R];
#pragma unroll
    for (int r = 0; r < R; ++r) rows[r] = W + size_t(min(n0 + r, N - 1)) * row_bytes;
    float acc[MMAX][R] = {};
    // Software pipeline: the next unit's bytes are in flight while this one is computed
    // (not for Q8_0 at M > 1, whose 2 x 17 raw halves would not fit beside the sums).
    constexpr bool kPrefetch = !(FMT == kQ8_0 && MMAX > 1);
    Unit<FMT> raw[R];
    if (kPrefetch && lane < units) {
#pragma unroll
      for (int r = 0; r < R; ++r) raw[r].load(rows[r], lane);
    }
    for (int u = lane; u < units; u += 32) {
      Unit<FMT> next[R];
      if (!kPrefetch) {
#pragma unroll
        for (int r = 0; r < R; ++r) raw[r].load(rows[r], u);
      } else if (u + 32 < units) {
#pragma unroll
        for (int r = 0; r < R; ++r) next[r].load(rows[r], u + 32);
      }
#pragma unroll
      for (int r = 0; r < R; ++r) raw[r].prepare();
#pragma unroll
      for (int h = 0; h < H; ++h) {
        const int g = H * u + h;
        float part[MMAX][R] = {};
#pragma unroll
        for (int j4 = 0; j4 < 8; ++j4) {
          float w[R][4];
#pragma unroll
          for (int r = 0; r < R; ++r) raw[r].slice(h, j4, w[r]);
#pragma unroll
          for (int m = 0; m < MMAX; ++m) {
            if (m >= M) break;
            const float4 xv = xs[(size_t(m) * 8 + j4) * G + g];
#pragma unroll
            for (int r = 0; r < R; ++r)
              part[m][r] += w[r][0] * xv.x + w[r][1] * xv.y + w[r][2] * xv.z + w[r][3] * xv.w;
          }
        }
#pragma unroll
        for (int m = 0; m < MMAX; ++m) {
          if (m >= M) break;
#pragma unroll
          for (int r = 0; r < R; ++r) {
            acc[m][r] += raw[r].scale(h) * part[m][r];
            if (FMT == kQ4_K) acc[m][r] -= raw[r].minv(h) * xsum[m * G + g];
          }
        }
      }
      if (kPrefetch) {
#pragma unroll
        for (int r = 0; r < R; ++r) raw[r] = next[r];
      }
    }
#pragma unroll
    for (int m = 0; m < MMAX; ++m) {
      if (m >= M) break;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float v = acc[m][r];
        for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0 && n0 + r < N) Y[size_t(m) * N + n0 + r] = v;
      }
    }
  }
}

size_t smem_bytes(const Args& a) {
  return size_t(a.M) * a.K * 4 + size_t(a.M) * (a.K / 32) * 4;
}

template <int FMT, int MMAX>
tc_status_t launch_fmt(const Args& a, cudaStream_t s) {
  const size_t smem = smem_bytes(a);
  if (const tc_status_t st =
          allow_smem(reinterpret_cast<const void*>(gemv_kernel<FMT, MMAX>), int(kMaxSmem));
      st != TC_SUCCESS)
    return st;
  // A persistent grid of as many CTAs as fit at once: each stages X once, so more CTAs
  // than fit would only repeat the staging in a second wave.
  const int per_sm =
      blocks_per_sm(reinterpret_cast<const void*>(gemv_kernel<FMT, MMAX>), kThreads, smem);
  const int rows_per_cta = (kThreads / 32) * kRowsPerWarp<FMT, MMAX>;
  const int grid = std::min((a.N + rows_per_cta - 1) / rows_per_cta, per_sm * sm_count());
  gemv_kernel<FMT, MMAX><<<grid, kThreads, smem, s>>>(static_cast<const uint8_t*>(a.w),
                                                      static_cast<const float*>(a.x), a.y, a.M, a.N,
                                                      a.K, w_row_bytes(a));
  return launched("quant gemv kernel launch");
}

template <int FMT>
tc_status_t launch_m(const Args& a, cudaStream_t s) {
  return a.M == 1 ? launch_fmt<FMT, 1>(a, s) : launch_fmt<FMT, kMaxM>(a, s);
}

}  // namespace

bool gemv_supports(const Args& a, std::string& why) {
  if (a.x_dtype != TC_DTYPE_F32) return (why = "x must be f32", false);
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q8_0 && a.w_dtype != TC_DTYPE_Q4_K)
    return (why = "formats Q4_0, Q8_0, Q4_K only", false);
  if (a.M > kMaxM) return (why = "M > 8", false);
  if (smem_bytes(a) > kMaxSmem) return (why = "X does not fit in shared memory", false);
  const auto align = reinterpret_cast<uintptr_t>(a.w) | reinterpret_cast<uintptr_t>(a.x);
  if (align % 16 != 0) return (why = "W or X not 16-byte aligned", false);
  return true;
}

tc_status_t launch_gemv(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  return with_format(a.w_dtype, [&](auto f) { return launch_m<decltype(f)::value>(a, s); });
}

}  // namespace tc::cuda::quant
