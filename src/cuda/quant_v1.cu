// The simple first kernels of the quantized family: the v1 matmul (every format and M; the
// tested fallback row, TC_Q4_USE_V1=1) and the prefill helpers that expand W and X to dense
// f16/f32 for tc's own GEMM.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda/quant_dequant.cuh"
#include "cuda/quant_launch.cuh"

namespace tc::cuda::quant {
namespace {

constexpr int kV1Threads = 128;
constexpr int kV1Rows = 8;  // activation rows per CTA

__device__ __forceinline__ float x_at(const Args& a, size_t i) {
  return a.x_dtype == TC_DTYPE_I8 ? a.x_scale * float(static_cast<const int8_t*>(a.x)[i])
                                  : static_cast<const float*>(a.x)[i];
}

// CTA (n, mblock): y[m, n] for 8 rows m; threads stride over 32-element groups of K (I8:
// over elements).
__global__ void __launch_bounds__(kV1Threads) v1_kernel(Args a, int fmt, size_t row_bytes) {
  const int n = blockIdx.x, m0 = blockIdx.y * kV1Rows;
  const int rows = min(kV1Rows, a.M - m0);
  const uint8_t* row = static_cast<const uint8_t*>(a.w) + size_t(n) * row_bytes;
  float acc[kV1Rows] = {};
  if (fmt < 0) {
    const float s = a.w_scales[n];
    for (int k = threadIdx.x; k < a.K; k += kV1Threads) {
      const float w = s * float(int8_t(row[k]));
      for (int r = 0; r < rows; ++r) acc[r] += w * x_at(a, size_t(m0 + r) * a.K + k);
    }
  } else {
    float w[32];
    for (int g = threadIdx.x; g < a.K / 32; g += kV1Threads) {
      decode_group32(fmt, row, g, w);
      for (int r = 0; r < rows; ++r) {
        float s = 0.0f;
        for (int j = 0; j < 32; ++j) s += w[j] * x_at(a, size_t(m0 + r) * a.K + 32 * g + j);
        acc[r] += s;
      }
    }
  }
  __shared__ float part[kV1Threads / 32][kV1Rows];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int r = 0; r < kV1Rows; ++r) {
    float v = acc[r];
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) part[warp][r] = v;
  }
  __syncthreads();
  if (threadIdx.x < rows) {
    float s = 0.0f;
    for (int i = 0; i < kV1Threads / 32; ++i) s += part[i][threadIdx.x];
    a.y[size_t(m0 + threadIdx.x) * a.N + n] = s;
  }
}

// One thread per 32-element group (I8: per element) of W -> dense row-major [N,K].
template <typename T>
__global__ void dequant_w_kernel(Args a, int fmt, size_t row_bytes, T* out) {
  const size_t per_row = fmt < 0 ? size_t(a.K) : size_t(a.K) / 32;
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= per_row * a.N) return;
  const size_t n = i / per_row, g = i % per_row;
  const uint8_t* row = static_cast<const uint8_t*>(a.w) + n * row_bytes;
  if (fmt < 0) {
    out[n * a.K + g] = T(a.w_scales[n] * float(int8_t(row[g])));
    return;
  }
  float w[32];
  decode_group32(fmt, row, int(g), w);
  // 16-byte stores (the group's 64 or 128 output bytes are 16-byte aligned: K % 32 == 0).
  uint4* o = reinterpret_cast<uint4*>(out + n * a.K + 32 * g);
  if constexpr (sizeof(T) == 2) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      uint32_t h[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const __half2 v = __floats2half2_rn(w[8 * j + 2 * i], w[8 * j + 2 * i + 1]);
        h[i] = *reinterpret_cast<const uint32_t*>(&v);
      }
      o[j] = make_uint4(h[0], h[1], h[2], h[3]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      o[j] = make_uint4(__float_as_uint(w[4 * j]), __float_as_uint(w[4 * j + 1]),
                        __float_as_uint(w[4 * j + 2]), __float_as_uint(w[4 * j + 3]));
  }
}

template <typename T>
__global__ void convert_x_kernel(Args a, T* out) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < size_t(a.M) * a.K) out[i] = T(x_at(a, i));
}

unsigned blocks_for(size_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace

tc_status_t launch_v1(const Args& a, void* stream) {
  const dim3 grid(a.N, (a.M + kV1Rows - 1) / kV1Rows);
  v1_kernel<<<grid, kV1Threads, 0, static_cast<cudaStream_t>(stream)>>>(a, format_code(a.w_dtype),
                                                                        w_row_bytes(a));
  return launched("quant v1 kernel launch");
}

tc_status_t launch_dequant_w(const Args& a, bool to_f16, void* out, void* stream) {
  const int fmt = format_code(a.w_dtype);
  const size_t items = size_t(a.N) * (fmt < 0 ? a.K : a.K / 32);
  auto s = static_cast<cudaStream_t>(stream);
  if (to_f16) {
    dequant_w_kernel<__half>
        <<<blocks_for(items, 256), 256, 0, s>>>(a, fmt, w_row_bytes(a), static_cast<__half*>(out));
  } else {
    dequant_w_kernel<float>
        <<<blocks_for(items, 256), 256, 0, s>>>(a, fmt, w_row_bytes(a), static_cast<float*>(out));
  }
  return launched("quant dequantize-W kernel launch");
}

tc_status_t launch_convert_x(const Args& a, bool to_f16, void* out, void* stream) {
  const size_t items = size_t(a.M) * a.K;
  auto s = static_cast<cudaStream_t>(stream);
  if (to_f16) {
    convert_x_kernel<__half><<<blocks_for(items, 256), 256, 0, s>>>(a, static_cast<__half*>(out));
  } else {
    convert_x_kernel<float><<<blocks_for(items, 256), 256, 0, s>>>(a, static_cast<float*>(out));
  }
  return launched("quant convert-X kernel launch");
}

int sm_count() {
  static int cached[64] = {};
  int dev = 0;
  cudaGetDevice(&dev);
  if (dev < 0 || dev >= 64) return 132;
  if (cached[dev] == 0) {
    int n = 0;
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    cached[dev] = n > 0 ? n : 132;
  }
  return cached[dev];
}

int blocks_per_sm(const void* kernel, int threads, size_t smem) {
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, size_t, int>, int> cache;
  int dev = 0;
  cudaGetDevice(&dev);
  const auto key = std::make_tuple(kernel, threads, smem, dev);
  std::lock_guard lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem) != cudaSuccess ||
      n < 1) {
    cudaGetLastError();  // clear it; one CTA per SM is always a valid choice
    n = 1;
  }
  cache.emplace(key, n);
  return n;
}

int resident_clusters(const void* kernel, int cluster, int threads, size_t smem) {
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, int>, int> cache;
  int dev = 0;
  cudaGetDevice(&dev);
  const auto key = std::make_tuple(kernel, cluster, dev);
  std::lock_guard lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(std::max(1, sm_count() / cluster) * cluster));
  cfg.blockDim = dim3(unsigned(threads));
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = unsigned(cluster);
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess || n <= 0) {
    cudaGetLastError();
    n = std::max(1, sm_count() / cluster);
  }
  cache.emplace(key, n);
  return n;
}

tc_status_t allow_smem(const void* kernel, size_t max_smem) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, bool> done;
  int dev = 0;
  cudaGetDevice(&dev);
  std::lock_guard lock(mu);
  if (done.count({kernel, dev})) return TC_SUCCESS;
  const cudaError_t e =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(max_smem));
  if (e != cudaSuccess) return cuda_fail(e, "quant kernel: cudaFuncSetAttribute");
  done[{kernel, dev}] = true;
  return TC_SUCCESS;
}

}  // namespace tc::cuda::quant
