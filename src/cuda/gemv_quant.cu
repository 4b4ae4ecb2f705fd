// Decode GEMV, M <= 8, f32 activations kept in f32: Q4_0, Q8_0, Q4_K (quant_kernels.h).
//
// A persistent grid of 2 CTAs per SM; each CTA first stages X in shared memory transposed by
// 32-element group (float4 index (m*8 + j/4)*G + g), so that the 32 lanes of a warp, which
// work on 32 consecutive groups of one weight row, read 32 consecutive float4: no bank
// conflicts. Then each warp takes one weight row at a time; a lane decodes its groups (several
// in flight, loads first) with exact integer-to-float tricks (0x4B000000 | q is 2^23 + q) and
// applies the block scale once per group. Q4_K lanes take 64-element chunks (two sub-blocks
// sharing 32 bytes of nibbles) and subtract min * sum(x) with sums staged beside X.
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/quant_dequant.cuh"
#include "cuda/quant_launch.cuh"

namespace tc::cuda::quant {
namespace {

constexpr int kThreads = 512;
constexpr int kMaxM = 8;
constexpr size_t kMaxSmem = 160 * 1024;

__device__ __forceinline__ float u2f_minus(uint32_t q, float bias) {
  return __int_as_float(0x4B000000 | q) - bias;  // exact: q < 2^23
}

// q4k_scale_min on the scales held in registers (bytes 0-3, 4-7, 8-11 of scales[12]):
// selects instead of a byte array, which would live in local memory.
__device__ __forceinline__ void q4k_scale_min_words(int j, uint32_t s0, uint32_t s1, uint32_t s2,
                                                    int* sc, int* m) {
  const int sh = 8 * (j & 3);
  if (j < 4) {
    *sc = (s0 >> sh) & 63;
    *m = (s1 >> sh) & 63;
  } else {
    const uint32_t q8 = (s2 >> sh) & 255, q0 = (s0 >> sh) & 255, q4 = (s1 >> sh) & 255;
    *sc = int((q8 & 0x0f) | ((q0 >> 6) << 4));
    *m = int((q8 >> 4) | ((q4 >> 6) << 4));
  }
}

template <int FMT>
struct Unit;  // raw bytes of one lane's unit of work

template <>
struct Unit<kQ4_0> {  // one block: 32 weights
  static constexpr int kUnroll = 4;
  uint16_t d, q[8];
  __device__ void load(const uint8_t* row, int u) {
    const uint16_t* b = reinterpret_cast<const uint16_t*>(row + 18 * u);
    d = __ldg(b);
#pragma unroll
    for (int i = 0; i < 8; ++i) q[i] = __ldg(b + 1 + i);
  }
  // w[j] for element j of the group.
  __device__ void decode(float* w) const {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t v = q[i];
      w[2 * i] = u2f_minus(v & 15, 8388616.0f);
      w[2 * i + 1] = u2f_minus((v >> 8) & 15, 8388616.0f);
      w[16 + 2 * i] = u2f_minus((v >> 4) & 15, 8388616.0f);
      w[16 + 2 * i + 1] = u2f_minus((v >> 12) & 15, 8388616.0f);
    }
  }
};

template <>
struct Unit<kQ8_0> {  // one block: 32 weights
  static constexpr int kUnroll = 2;
  uint16_t d, q[16];
  __device__ void load(const uint8_t* row, int u) {
    const uint16_t* b = reinterpret_cast<const uint16_t*>(row + 34 * u);
    d = __ldg(b);
#pragma unroll
    for (int i = 0; i < 16; ++i) q[i] = __ldg(b + 1 + i);
  }
  __device__ void decode(float* w) const {
#pragma unroll
    for (int i = 0; i < 16; ++i) {  // (q ^ 0x80) = q + 128 for int8 q
      const uint32_t v = q[i] ^ 0x8080u;
      w[2 * i] = u2f_minus(v & 255, 8388736.0f);
      w[2 * i + 1] = u2f_minus(v >> 8, 8388736.0f);
    }
  }
};

template <>
struct Unit<kQ4_K> {  // chunk c of a super-block: sub-blocks 2c (low nibbles), 2c+1 (high)
  static constexpr int kUnroll = 2;
  uint4 head, lo, hi;
  int c;
  __device__ void load(const uint8_t* row, int u) {
    const uint4* b = reinterpret_cast<const uint4*>(row + 144 * (u / 4));
    c = u % 4;
    head = __ldg(b);
    lo = __ldg(b + 1 + 2 * c);
    hi = __ldg(b + 2 + 2 * c);
  }
};

__device__ __forceinline__ float dot8(const float4* xs, int stride, const float* w) {
  const float4 a = xs[0], b = xs[stride];
  return w[0] * a.x + w[1] * a.y + w[2] * a.z + w[3] * a.w + w[4] * b.x + w[5] * b.y + w[6] * b.z +
         w[7] * b.w;
}

// sum_j w[j] * x[m, 32 g + j] with x staged as float4 at xs[(m*8 + j4) * G + g].
__device__ __forceinline__ float dot32(const float4* xs, int G, int m, int g, const float* w) {
  const float4* p = xs + size_t(m) * 8 * G + g;
  return dot8(p, G, w) + dot8(p + 2 * G, G, w + 8) + dot8(p + 4 * G, G, w + 16) +
         dot8(p + 6 * G, G, w + 24);
}

template <int FMT>
__global__ void __launch_bounds__(kThreads)
    gemv_kernel(const uint8_t* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y,
                int M, int N, int K, size_t row_bytes) {
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
  const int units = FMT == kQ4_K ? K / 64 : G;
  constexpr int U = Unit<FMT>::kUnroll;
  for (int n = blockIdx.x * warps + warp; n < N; n += gridDim.x * warps) {
    const uint8_t* row = W + size_t(n) * row_bytes;
    float acc[kMaxM] = {};
    for (int u0 = lane; u0 < units; u0 += 32 * U) {
      Unit<FMT> raw[U];
#pragma unroll
      for (int i = 0; i < U; ++i) {
        if (u0 + 32 * i < units) raw[i].load(row, u0 + 32 * i);
      }
#pragma unroll
      for (int i = 0; i < U; ++i) {
        const int u = u0 + 32 * i;
        if (u >= units) break;
        float w[32];
        if constexpr (FMT == kQ4_K) {
          const uint4 h = raw[i].head;
          const float d = __half2float(__ushort_as_half(uint16_t(h.x & 0xffff)));
          const float dmin = __half2float(__ushort_as_half(uint16_t(h.x >> 16)));
          for (int half = 0; half < 2; ++half) {  // sub-block 2c + half
            int sc, mn;
            q4k_scale_min_words(2 * raw[i].c + half, h.y, h.z, h.w, &sc, &mn);
            const float d1 = d * float(sc), m1 = dmin * float(mn);
            const int shift = 4 * half;
#pragma unroll
            for (int b = 0; b < 8; ++b) {
              const uint32_t v = (b < 4 ? reinterpret_cast<const uint32_t*>(&raw[i].lo)[b]
                                        : reinterpret_cast<const uint32_t*>(&raw[i].hi)[b - 4]) >>
                                 shift;
#pragma unroll
              for (int e = 0; e < 4; ++e) w[4 * b + e] = u2f_minus((v >> (8 * e)) & 15, 8388608.0f);
            }
            const int g = 2 * u + half;
#pragma unroll
            for (int m = 0; m < kMaxM; ++m) {
              if (m < M) acc[m] += d1 * dot32(xs, G, m, g, w) - m1 * xsum[m * G + g];
            }
          }
        } else {
          raw[i].decode(w);
          const float d = __half2float(__ushort_as_half(raw[i].d));
#pragma unroll
          for (int m = 0; m < kMaxM; ++m) {
            if (m < M) acc[m] += d * dot32(xs, G, m, u, w);
          }
        }
      }
    }
#pragma unroll
    for (int m = 0; m < kMaxM; ++m) {
      if (m >= M) break;
      float v = acc[m];
      for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0) Y[size_t(m) * N + n] = v;
    }
  }
}

size_t smem_bytes(const Args& a) {
  return size_t(a.M) * a.K * 4 + size_t(a.M) * (a.K / 32) * 4;
}

template <int FMT>
tc_status_t launch_fmt(const Args& a, cudaStream_t s) {
  const size_t smem = smem_bytes(a);
  static bool configured = false;  // the attribute is per function, set once per process
  if (!configured) {
    const cudaError_t e = cudaFuncSetAttribute(
        gemv_kernel<FMT>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxSmem));
    if (e != cudaSuccess) return cuda_fail(e, "quant gemv: cudaFuncSetAttribute");
    configured = true;
  }
  const int per_sm = smem <= 100 * 1024 ? 2 : 1;
  const int rows_per_cta = kThreads / 32;
  const int grid = std::min((a.N + rows_per_cta - 1) / rows_per_cta, per_sm * sm_count());
  gemv_kernel<FMT><<<grid, kThreads, smem, s>>>(static_cast<const uint8_t*>(a.w),
                                                static_cast<const float*>(a.x), a.y, a.M, a.N, a.K,
                                                w_row_bytes(a));
  return launched("quant gemv kernel launch");
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
  switch (a.w_dtype) {
    case TC_DTYPE_Q4_0:
      return launch_fmt<kQ4_0>(a, s);
    case TC_DTYPE_Q8_0:
      return launch_fmt<kQ8_0>(a, s);
    default:
      return launch_fmt<kQ4_K>(a, s);
  }
}

}  // namespace tc::cuda::quant
