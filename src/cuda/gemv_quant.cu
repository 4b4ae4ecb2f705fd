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

// One lane's unit of work: raw bytes of H groups of 32 elements of one weight row, decoded
// four elements ("slice" j4 of group h: elements 4*j4 .. 4*j4+3) at a time into exact small
// integers; scale(h) (and, for Q4_K, minv(h)) turn them into weights.
template <int FMT>
struct Unit;

template <>
struct Unit<kQ4_0> {  // one block: element e < 16 is the low nibble of qs[e], else high of qs[e-16]
  static constexpr int H = 1;
  uint32_t q[4];  // qs bytes 4i .. 4i+3
  float d;
  __device__ void load(const uint8_t* row, int u) {
    const uint16_t* b = reinterpret_cast<const uint16_t*>(row + 18 * u);
    d = __half2float(__ushort_as_half(__ldg(b)));
#pragma unroll
    for (int i = 0; i < 4; ++i)
      q[i] = uint32_t(__ldg(b + 1 + 2 * i)) | (uint32_t(__ldg(b + 2 + 2 * i)) << 16);
  }
  __device__ void slice(int, int j4, float* w) const {
    const uint32_t v = q[j4 & 3] >> (j4 < 4 ? 0 : 4);
#pragma unroll
    for (int e = 0; e < 4; ++e) w[e] = u2f_minus((v >> (8 * e)) & 15, 8388616.0f);
  }
  __device__ float scale(int) const {
    return d;
  }
  __device__ float minv(int) const {
    return 0.0f;
  }
};

template <>
struct Unit<kQ8_0> {  // one block of 32 int8
  static constexpr int H = 1;
  uint32_t q[8];
  float d;
  __device__ void load(const uint8_t* row, int u) {
    const uint16_t* b = reinterpret_cast<const uint16_t*>(row + 34 * u);
    d = __half2float(__ushort_as_half(__ldg(b)));
#pragma unroll
    for (int i = 0; i < 8; ++i)
      q[i] = uint32_t(__ldg(b + 1 + 2 * i)) | (uint32_t(__ldg(b + 2 + 2 * i)) << 16);
  }
  __device__ void slice(int, int j4, float* w) const {
    const uint32_t v = q[j4] ^ 0x80808080u;  // q + 128 per byte
#pragma unroll
    for (int e = 0; e < 4; ++e) w[e] = u2f_minus((v >> (8 * e)) & 255, 8388736.0f);
  }
  __device__ float scale(int) const {
    return d;
  }
  __device__ float minv(int) const {
    return 0.0f;
  }
};

template <>
struct Unit<kQ4_K> {  // chunk c of a super-block: sub-blocks 2c (low nibbles), 2c+1 (high)
  static constexpr int H = 2;
  uint4 lo, hi;
  float d1[2], m1[2];
  __device__ void load(const uint8_t* row, int u) {
    const uint4* b = reinterpret_cast<const uint4*>(row + 144 * (u / 4));
    const int c = u % 4;
    const uint4 head = __ldg(b);
    lo = __ldg(b + 1 + 2 * c);
    hi = __ldg(b + 2 + 2 * c);
    const float d = __half2float(__ushort_as_half(uint16_t(head.x & 0xffff)));
    const float dmin = __half2float(__ushort_as_half(uint16_t(head.x >> 16)));
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int sc, mn;
      q4k_scale_min_words(2 * c + h, head.y, head.z, head.w, &sc, &mn);
      d1[h] = d * float(sc);
      m1[h] = dmin * float(mn);
    }
  }
  __device__ void slice(int h, int j4, float* w) const {
    const uint32_t word = j4 == 0   ? lo.x
                          : j4 == 1 ? lo.y
                          : j4 == 2 ? lo.z
                          : j4 == 3 ? lo.w
                          : j4 == 4 ? hi.x
                          : j4 == 5 ? hi.y
                          : j4 == 6 ? hi.z
                                    : hi.w;
    const uint32_t v = word >> (4 * h);
#pragma unroll
    for (int e = 0; e < 4; ++e) w[e] = u2f_minus((v >> (8 * e)) & 15, 8388608.0f);
  }
  __device__ float scale(int h) const {
    return d1[h];
  }
  __device__ float minv(int h) const {
    return m1[h];
  }
};

// MMAX = 1 (M = 1) or 8 (M = 2..8). A warp works on R weight rows at once so that each x
// value read from shared memory serves R rows (the reads, not HBM, would bound M = 1 else).
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
    // Software pipeline: the next unit's bytes are in flight while this one is computed.
    Unit<FMT> raw[R];
    if (lane < units) {
#pragma unroll
      for (int r = 0; r < R; ++r) raw[r].load(rows[r], lane);
    }
    for (int u = lane; u < units; u += 32) {
      Unit<FMT> next[R];
      if (u + 32 < units) {
#pragma unroll
        for (int r = 0; r < R; ++r) next[r].load(rows[r], u + 32);
      }
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
#pragma unroll
      for (int r = 0; r < R; ++r) raw[r] = next[r];
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
  static bool configured = false;  // the attribute is per function, set once per process
  if (!configured) {
    const cudaError_t e = cudaFuncSetAttribute(
        gemv_kernel<FMT, MMAX>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxSmem));
    if (e != cudaSuccess) return cuda_fail(e, "quant gemv: cudaFuncSetAttribute");
    configured = true;
  }
  // A persistent grid of as many CTAs as fit at once: each stages X once, so more CTAs
  // than fit would only repeat the staging in a second wave.
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gemv_kernel<FMT, MMAX>, kThreads,
                                                    smem) != cudaSuccess ||
      per_sm < 1)
    per_sm = 1;
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
