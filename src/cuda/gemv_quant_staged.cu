// Decode GEMV at M = 1 for Q4_0 / Q8_0 with weights streamed through shared memory
// (quant_kernels.h: launch_gemv_staged).
//
// The 18- and 34-byte blocks are only 2-byte aligned, so a lane reading its own block straight
// from global memory needs 9 (17) two-byte loads whose 32 lanes touch ~5 cache lines each: the
// L1 passes, not HBM, bound such a kernel. Here each warp copies the contiguous bytes of 32
// blocks of each of its R rows with 16-byte cp.async (one line per 8 lanes), kStages chunks in
// flight, and lanes decode their block from shared memory. X (f32) is staged once per CTA,
// transposed by group as in gemv_quant.cu. Needs K % 256 == 0 (rows 16-byte aligned).
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/gemv_quant_units.cuh"
#include "cuda/quant_launch.cuh"

namespace tc::cuda::quant {
namespace {

constexpr int kThreads = 256;
constexpr int kStages = 3;

template <int FMT>
constexpr int kRows = FMT == kQ4_0 ? 4 : 2;  // weight rows per warp
template <int FMT>
constexpr int kChunk = 32 * block_bytes(FMT);  // bytes of 32 blocks of one row

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// X bytes in shared memory before the rings: f32 [8][G] float4, or (XQ8) int8 words [8][G],
// f32 scales [G] and int sums [G]. K % 256 == 0 keeps both multiples of 16.
__host__ __device__ constexpr size_t x_bytes(int K, bool xq8) {
  return xq8 ? size_t(K) + size_t(K / 32) * 8 : size_t(K) * 4;
}

template <int FMT, bool XQ8>
__global__ void __launch_bounds__(kThreads)
    staged_kernel(const uint8_t* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y,
                  int N, int K, size_t row_bytes) {
  constexpr int R = kRows<FMT>, CH = kChunk<FMT>, BB = block_bytes(FMT);
  extern __shared__ float4 xs[];
  const int G = K / 32;
  int* xq = reinterpret_cast<int*>(xs);              // XQ8: [8][G] words of 4 int8
  float* xd = reinterpret_cast<float*>(xq + 8 * G);  // XQ8: [G] scales
  int* xsum = reinterpret_cast<int*>(xd + G);        // XQ8: [G] sums of the int8
  if constexpr (XQ8) {  // per 32: scale amax/127, values rounded to nearest (gemv_quant_q8.cu)
    for (int g = threadIdx.x; g < G; g += kThreads) {
      const float4* src = reinterpret_cast<const float4*>(X + 32 * size_t(g));
      float4 v[8];
      float amax = 0.0f;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        v[j] = __ldg(src + j);
        amax = fmaxf(amax, amax4(v[j]));
      }
      const float id = q8_inv_scale(amax);
      int sum = 0;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        xq[size_t(j) * G + g] = q8_pack4(v[j], id, sum);
      }
      xd[g] = amax / 127.0f;
      xsum[g] = sum;
    }
  } else {
    const float4* x4 = reinterpret_cast<const float4*>(X);
    for (int i = threadIdx.x; i < 8 * G; i += kThreads)
      xs[size_t(i % 8) * G + i / 8] = __ldg(x4 + i);
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  uint8_t* ring =
      reinterpret_cast<uint8_t*>(xs) + x_bytes(K, XQ8) + size_t(warp) * kStages * R * CH;
  const int chunks = (G + 31) / 32;
  const int sets = (N + R - 1) / R;
  const int gw = blockIdx.x * (kThreads / 32) + warp, tw = gridDim.x * (kThreads / 32);
  const int my_sets = gw < sets ? (sets - gw + tw - 1) / tw : 0;
  const int items = my_sets * chunks;
  // Item t: row set gw + (t / chunks) * tw, blocks 32 * (t % chunks) ...
  auto issue = [&](int t) {
    if (t < items) {
      const int n0 = (gw + (t / chunks) * tw) * R, c = t % chunks;
      const int nblk = min(32, G - 32 * c);
      uint8_t* dst = ring + size_t(t % kStages) * R * CH;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const uint8_t* src = W + size_t(min(n0 + r, N - 1)) * row_bytes + size_t(32) * c * BB;
        for (int i = lane; i < nblk * BB / 16; i += 32)
          cp_async16(dst + r * CH + 16 * i, src + 16 * i);
      }
    }
    cp_async_commit();  // empty groups keep the count uniform
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue(s);
  __syncthreads();  // X staged
  float acc[R] = {};
  for (int t = 0; t < items; ++t) {
    issue(t + kStages - 1);
    cp_async_wait<kStages - 1>();
    __syncwarp();
    const int c = t % chunks, g = 32 * c + lane;
    if (g < G) {
      const uint8_t* buf = ring + size_t(t % kStages) * R * CH;
      Unit<FMT> raw[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        raw[r].load_plain(buf + r * CH + lane * BB);
        raw[r].prepare();
      }
      if constexpr (XQ8) {
        int xw[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) xw[i] = xq[size_t(i) * G + g];
        const float dx = xd[g];
        const int sx = xsum[g];
#pragma unroll
        for (int r = 0; r < R; ++r) {
          int sdot = 0;
#pragma unroll
          for (int i = 0; i < 8; ++i) sdot = __dp4a(int(raw[r].word(0, i)), xw[i], sdot);
          if (FMT == kQ4_0) sdot -= 8 * sx;  // q - 8
          acc[r] += raw[r].scale(0) * dx * float(sdot);
        }
      } else {
        float part[R] = {};
#pragma unroll
        for (int j4 = 0; j4 < 8; ++j4) {
          const float4 xv = xs[size_t(j4) * G + g];
#pragma unroll
          for (int r = 0; r < R; ++r) {
            float w[4];
            raw[r].slice(0, j4, w);
            part[r] += w[0] * xv.x + w[1] * xv.y + w[2] * xv.z + w[3] * xv.w;
          }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] += raw[r].scale(0) * part[r];
      }
    }
    __syncwarp();           // the buffer is refilled by the next issue
    if (c == chunks - 1) {  // row set done
      const int n0 = (gw + (t / chunks) * tw) * R;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float v = acc[r];
        for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0 && n0 + r < N) Y[n0 + r] = v;
        acc[r] = 0.0f;
      }
    }
  }
  cp_async_wait<0>();
}

size_t smem_bytes(const Args& a, bool xq8) {
  const int ring = kStages * (a.w_dtype == TC_DTYPE_Q4_0 ? kRows<kQ4_0> * kChunk<kQ4_0>
                                                         : kRows<kQ8_0> * kChunk<kQ8_0>);
  return x_bytes(a.K, xq8) + size_t(kThreads / 32) * ring;
}

template <int FMT, bool XQ8>
tc_status_t launch_fmt(const Args& a, cudaStream_t s) {
  const void* kernel = reinterpret_cast<const void*>(staged_kernel<FMT, XQ8>);
  const size_t smem = smem_bytes(a, XQ8);
  if (const tc_status_t st = allow_smem(kernel, 200 * 1024); st != TC_SUCCESS) return st;
  const int per_sm = blocks_per_sm(kernel, kThreads, smem);
  const int rows_per_cta = (kThreads / 32) * kRows<FMT>;
  const int grid = std::min((a.N + rows_per_cta - 1) / rows_per_cta, per_sm * sm_count());
  staged_kernel<FMT, XQ8><<<grid, kThreads, smem, s>>>(static_cast<const uint8_t*>(a.w),
                                                       static_cast<const float*>(a.x), a.y, a.N,
                                                       a.K, w_row_bytes(a));
  return launched("quant staged gemv kernel launch");
}

bool supports(const Args& a, bool xq8, std::string& why) {
  if (a.x_dtype != TC_DTYPE_F32) return (why = "x must be f32", false);
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q8_0)
    return (why = "formats Q4_0, Q8_0 only", false);
  if (a.M != 1) return (why = "M != 1", false);
  if (a.K % 256 != 0) return (why = "K % 256 != 0 (rows not 16-byte aligned)", false);
  if (smem_bytes(a, xq8) > 200 * 1024) return (why = "X does not fit in shared memory", false);
  const auto align = reinterpret_cast<uintptr_t>(a.w) | reinterpret_cast<uintptr_t>(a.x);
  if (align % 16 != 0) return (why = "W or X not 16-byte aligned", false);
  return true;
}

}  // namespace

bool gemv_staged_supports(const Args& a, std::string& why) {
  return supports(a, false, why);
}

tc_status_t launch_gemv_staged(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  return a.w_dtype == TC_DTYPE_Q4_0 ? launch_fmt<kQ4_0, false>(a, s)
                                    : launch_fmt<kQ8_0, false>(a, s);
}

bool gemv_staged_q8_supports(const Args& a, std::string& why) {
  return supports(a, true, why);
}

tc_status_t launch_gemv_staged_q8(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  return a.w_dtype == TC_DTYPE_Q4_0 ? launch_fmt<kQ4_0, true>(a, s) : launch_fmt<kQ8_0, true>(a, s);
}

}  // namespace tc::cuda::quant
