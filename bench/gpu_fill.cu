// Random device fills for the benchmark (contract in gpu_timer.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "gpu_timer.h"

namespace tc::bench {
namespace {

__device__ uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <class T>
__global__ void fill_kernel(T* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint64_t h = mix(seed * 0x100000001b3ull + i);
    const float u = float(h >> 40) * (2.0f / 16777216.0f) - 1.0f;  // U(-1, 1), 24 bits
    if constexpr (std::is_integral_v<T>)
      p[i] = T(int(h & 0xff) - 128);
    else
      p[i] = T(u);
  }
}

template <class T>
cudaError_t launch(void* p, size_t n, uint64_t seed, cudaStream_t s) {
  const size_t blocks = (n + 255) / 256;
  fill_kernel<T><<<unsigned(blocks < 8192 ? (blocks ? blocks : 1) : 8192), 256, 0, s>>>(
      static_cast<T*>(p), n, seed);
  return cudaGetLastError();
}

}  // namespace

cudaError_t fill_random(void* p, tc_dtype_t t, size_t count, uint64_t seed, cudaStream_t s) {
  switch (t) {
    case TC_DTYPE_F16:
      return launch<__half>(p, count, seed, s);
    case TC_DTYPE_BF16:
      return launch<__nv_bfloat16>(p, count, seed, s);
    case TC_DTYPE_I8:
      return launch<int8_t>(p, count, seed, s);
    case TC_DTYPE_I32:
      return launch<int32_t>(p, count, seed, s);
    default:
      return launch<float>(p, count, seed, s);
  }
}

}  // namespace tc::bench
