// Int8 weights with an f32 scale per row, M <= 8 (quant_kernels.h): one warp per weight row,
// each lane takes 16 weights at a time (one 16-byte load), activations through L1. x f32: f32
// products; x int8: dp4a per 4 products, each 16-product partial (|s| <= 2^18) converted to
// f32 exactly, so only the f32 sum over K rounds.
#include <cuda_runtime.h>

#include "cuda/quant_launch.cuh"

namespace tc::cuda::quant {
namespace {

constexpr int kThreads = 256;

template <bool XI8>
__global__ void __launch_bounds__(kThreads) i8_gemv_kernel(Args a) {
  const int lane = threadIdx.x % 32;
  const int n = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
  if (n >= a.N) return;
  const uint4* w =
      reinterpret_cast<const uint4*>(static_cast<const int8_t*>(a.w) + size_t(n) * a.K);
  float acc[8] = {};
  for (int c = lane; c < a.K / 16; c += 32) {
    const uint4 wv = __ldg(w + c);
    if constexpr (XI8) {
      const uint4* x = reinterpret_cast<const uint4*>(a.x);
#pragma unroll
      for (int m = 0; m < 8; ++m) {
        if (m >= a.M) break;
        const uint4 xv = __ldg(x + size_t(m) * (a.K / 16) + c);
        int s = __dp4a(int(wv.x), int(xv.x), 0);
        s = __dp4a(int(wv.y), int(xv.y), s);
        s = __dp4a(int(wv.z), int(xv.z), s);
        s = __dp4a(int(wv.w), int(xv.w), s);
        acc[m] += float(s);
      }
    } else {
      float wf[16];
      const uint32_t words[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
      for (int i = 0; i < 16; ++i) wf[i] = float(int8_t(words[i / 4] >> (8 * (i % 4))));
      const float4* x = reinterpret_cast<const float4*>(a.x);
#pragma unroll
      for (int m = 0; m < 8; ++m) {
        if (m >= a.M) break;
        const float4* xr = x + size_t(m) * (a.K / 4) + 4 * c;
        float s = 0.0f;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float4 v = __ldg(xr + q);
          s += wf[4 * q] * v.x + wf[4 * q + 1] * v.y + wf[4 * q + 2] * v.z + wf[4 * q + 3] * v.w;
        }
        acc[m] += s;
      }
    }
  }
  const float scale = a.w_scales[n] * (XI8 ? a.x_scale : 1.0f);
#pragma unroll
  for (int m = 0; m < 8; ++m) {
    if (m >= a.M) break;
    float v = acc[m];
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) a.y[size_t(m) * a.N + n] = scale * v;
  }
}

}  // namespace

bool i8_gemv_supports(const Args& a, std::string& why) {
  if (a.w_dtype != TC_DTYPE_I8) return (why = "I8 weights only", false);
  if (a.x_dtype != TC_DTYPE_F32 && a.x_dtype != TC_DTYPE_I8)
    return (why = std::string("x_dtype ") + tc_dtype_name(a.x_dtype) + ": X must be f32 or i8",
            false);
  if (a.M > 8) return (why = "M > 8", false);
  if (a.K % 16 != 0) return (why = "K not a multiple of 16", false);
  const auto align = reinterpret_cast<uintptr_t>(a.w) | reinterpret_cast<uintptr_t>(a.x);
  if (align % 16 != 0) return (why = "W or X not 16-byte aligned", false);
  return true;
}

tc_status_t launch_i8_gemv(const Args& a, void* stream) {
  const int grid = (a.N + kThreads / 32 - 1) / (kThreads / 32);
  auto s = static_cast<cudaStream_t>(stream);
  if (a.x_dtype == TC_DTYPE_I8) {
    i8_gemv_kernel<true><<<grid, kThreads, 0, s>>>(a);
  } else {
    i8_gemv_kernel<false><<<grid, kThreads, 0, s>>>(a);
  }
  return launched("quant i8 gemv kernel launch");
}

}  // namespace tc::cuda::quant
