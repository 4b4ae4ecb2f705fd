// Decode GEMV, M <= 8, activations quantized to 8 bits on the fly (quant_kernels.h,
// launch_gemv_q8; the table uses it only when desc.quantize_activations allows the error).
//
// Each CTA of a persistent grid quantizes X itself while staging it in shared memory: per
// 32-element block an f32 scale amax/127, int8 values rounded to nearest, and the sum of the
// int8 values; the int8 words are stored transposed by block ([m][word][block]) so that lanes
// on consecutive blocks read consecutive words. A warp takes 2 weight rows at a time; a lane
// decodes its block of each row into int8 words (nibbles masked four at a time) and dots them
// with dp4a: 8 instructions per 32 weights instead of 32 FMAs plus conversions, and a quarter
// of the shared-memory traffic of the f32 path. Q4_0's -8 and Q4_K's mins go through the
// block sums. The error is that of rounding X to 1/127 of its block maximum (~4e-3 rms).
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/gemv_quant_units.cuh"
#include "cuda/quant_launch.cuh"

namespace tc::cuda::quant {
namespace {

constexpr int kThreads = 512;
constexpr int kMaxM = 8;
constexpr int kR = 2;  // weight rows per warp
constexpr size_t kMaxSmem = 160 * 1024;

size_t smem_bytes(const Args& a) {  // int8 X, then f32 scales and int sums per block
  return size_t(a.M) * a.K + size_t(a.M) * (a.K / 32) * 8;
}

__device__ __forceinline__ int dot8(const uint32_t* w, const int* x) {
  int s = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) s = __dp4a(int(w[i]), x[i], s);
  return s;
}

template <int FMT>
__global__ void __launch_bounds__(kThreads)
    gemv_q8_kernel(const uint8_t* __restrict__ W, const float* __restrict__ X,
                   float* __restrict__ Y, int M, int N, int K, size_t row_bytes) {
  constexpr int H = Unit<FMT>::H;
  extern __shared__ int xq[];  // [M][8][G] words of 4 int8
  const int G = K / 32;
  float* xd = reinterpret_cast<float*>(xq + size_t(M) * 8 * G);  // [M][G]
  int* xsum = reinterpret_cast<int*>(xd + size_t(M) * G);        // [M][G]
  for (int i = threadIdx.x; i < M * G; i += kThreads) {
    const int m = i / G, g = i % G;
    const float4* src = reinterpret_cast<const float4*>(X + size_t(m) * K + 32 * g);
    float4 v[8];
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      v[j] = __ldg(src + j);
      amax = fmaxf(amax, amax4(v[j]));
    }
    const float d = amax / 127.0f, id = q8_inv_scale(amax);
    int sum = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      xq[(size_t(m) * 8 + j) * G + g] = q8_pack4(v[j], id, sum);
    }
    xd[i] = d;
    xsum[i] = sum;
  }
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = kThreads / 32;
  const int units = G / H;
  for (int n0 = (blockIdx.x * warps + warp) * kR; n0 < N; n0 += gridDim.x * warps * kR) {
    const uint8_t* rows[kR];
#pragma unroll
    for (int r = 0; r < kR; ++r) rows[r] = W + size_t(min(n0 + r, N - 1)) * row_bytes;
    float acc[kMaxM][kR] = {};
    // The next unit's bytes are in flight while this one is computed (not for Q8_0, whose
    // 2 x 17 raw halves per row would not fit twice).
    constexpr bool kPrefetch = FMT != kQ8_0;
    Unit<FMT> raw[kR];
    if (kPrefetch && lane < units) {
#pragma unroll
      for (int r = 0; r < kR; ++r) raw[r].load(rows[r], lane);
    }
    for (int u = lane; u < units; u += 32) {
      Unit<FMT> next[kR];
      if (!kPrefetch) {
#pragma unroll
        for (int r = 0; r < kR; ++r) raw[r].load(rows[r], u);
      } else if (u + 32 < units) {
#pragma unroll
        for (int r = 0; r < kR; ++r) next[r].load(rows[r], u + 32);
      }
#pragma unroll
      for (int r = 0; r < kR; ++r) raw[r].prepare();
#pragma unroll
      for (int h = 0; h < H; ++h) {
        const int g = H * u + h;
        uint32_t wq[kR][8];  // int8 words of the group's 32 weights (Q4: 0..15)
#pragma unroll
        for (int r = 0; r < kR; ++r) {
#pragma unroll
          for (int i = 0; i < 8; ++i) wq[r][i] = raw[r].word(h, i);
        }
#pragma unroll
        for (int m = 0; m < kMaxM; ++m) {
          if (m >= M) break;
          int xw[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) xw[i] = xq[(size_t(m) * 8 + i) * G + g];
          const float dx = xd[m * G + g];
          const int sx = xsum[m * G + g];
#pragma unroll
          for (int r = 0; r < kR; ++r) {
            const int s = dot8(wq[r], xw);
            if constexpr (FMT == kQ4_0) {
              acc[m][r] += raw[r].scale(h) * dx * float(s - 8 * sx);
            } else if constexpr (FMT == kQ8_0) {
              acc[m][r] += raw[r].scale(h) * dx * float(s);
            } else {
              acc[m][r] += dx * (raw[r].scale(h) * float(s) - raw[r].minv(h) * float(sx));
            }
          }
        }
      }
      if (kPrefetch) {
#pragma unroll
        for (int r = 0; r < kR; ++r) raw[r] = next[r];
      }
    }
#pragma unroll
    for (int m = 0; m < kMaxM; ++m) {
      if (m >= M) break;
#pragma unroll
      for (int r = 0; r < kR; ++r) {
        float v = acc[m][r];
        for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0 && n0 + r < N) Y[size_t(m) * N + n0 + r] = v;
      }
    }
  }
}

template <int FMT>
tc_status_t launch_fmt(const Args& a, cudaStream_t s) {
  const size_t smem = smem_bytes(a);
  if (const tc_status_t st =
          allow_smem(reinterpret_cast<const void*>(gemv_q8_kernel<FMT>), int(kMaxSmem));
      st != TC_SUCCESS)
    return st;
  const int per_sm =
      blocks_per_sm(reinterpret_cast<const void*>(gemv_q8_kernel<FMT>), kThreads, smem);
  const int rows_per_cta = (kThreads / 32) * kR;
  const int grid = std::min((a.N + rows_per_cta - 1) / rows_per_cta, per_sm * sm_count());
  gemv_q8_kernel<FMT><<<grid, kThreads, smem, s>>>(static_cast<const uint8_t*>(a.w),
                                                   static_cast<const float*>(a.x), a.y, a.M, a.N,
                                                   a.K, w_row_bytes(a));
  return launched("quant q8 gemv kernel launch");
}

}  // namespace

bool gemv_q8_supports(const Args& a, std::string& why) {
  if (a.x_dtype != TC_DTYPE_F32) return (why = "x must be f32", false);
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q8_0 && a.w_dtype != TC_DTYPE_Q4_K)
    return (why = "formats Q4_0, Q8_0, Q4_K only", false);
  if (a.M > kMaxM) return (why = "M > 8", false);
  if (smem_bytes(a) > kMaxSmem) return (why = "X does not fit in shared memory", false);
  const auto align = reinterpret_cast<uintptr_t>(a.w) | reinterpret_cast<uintptr_t>(a.x);
  if (align % 16 != 0) return (why = "W or X not 16-byte aligned", false);
  return true;
}

tc_status_t launch_gemv_q8(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  return with_format(a.w_dtype, [&](auto f) { return launch_fmt<decltype(f)::value>(a, s); });
}

}  // namespace tc::cuda::quant
