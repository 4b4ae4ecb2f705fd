// Decode-kernel choice for the benchmark, random valid blocks as benchmark data, and f16
// activations widened to f32 (quant_kernels.h).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/quant_dequant.cuh"
#include "cuda/quant_launch.cuh"
#include "cuda/quant_mma_b32.h"

namespace tc {
void set_error_message(std::string message);  // core/error.h (its fmt does not build under nvcc)
}

namespace tc::cuda::quant {
namespace {

__device__ __forceinline__ uint32_t mix(uint64_t v) {  // splitmix64 finalizer
  v += 0x9E3779B97F4A7C15ull;
  v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
  v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
  return uint32_t((v ^ (v >> 31)) >> 16);
}

__device__ __forceinline__ uint16_t scale_bits(uint32_t h) {
  return __half_as_ushort(__float2half(0.01f + 0.01f * float(h & 1023) / 1024.0f));
}

// One thread per block of the format: random bytes, then valid scales at the fp16 fields.
__global__ void fill_kernel(uint8_t* w, size_t blocks, int fmt, uint64_t seed) {
  const size_t b = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= blocks) return;
  const int bytes = block_bytes(fmt);
  uint8_t* p = w + b * bytes;
  for (int i = 0; i < bytes; i += 2) {
    const uint32_t h = mix(seed * 0x100000001B3ull + b * bytes + i);
    p[i] = uint8_t(h);
    p[i + 1] = uint8_t(h >> 8);
  }
  const uint32_t h = mix(~seed + b);
  const int at = fmt == kQ6_K ? 208 : 0;
  const uint16_t d = scale_bits(h);
  p[at] = uint8_t(d);
  p[at + 1] = uint8_t(d >> 8);
  if (fmt == kQ4_K) {
    const uint16_t dmin = scale_bits(h >> 12);
    p[2] = uint8_t(dmin);
    p[3] = uint8_t(dmin >> 8);
  }
}

// f16 / bf16 -> f32, one element per thread of a grid-stride loop.
__global__ void half_to_f32_kernel(const uint16_t* __restrict__ x, bool bf16, float* __restrict__ y,
                                   size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    y[i] = bf16 ? __uint_as_float(uint32_t(x[i]) << 16) : __half2float(__ushort_as_half(x[i]));
}

}  // namespace

tc_status_t launch_convert_half_f32(const void* x, bool bf16, float* y, size_t n, void* stream) {
  if (n == 0) return TC_SUCCESS;
  const unsigned grid = unsigned(std::min<size_t>((n + 255) / 256, 4096));
  half_to_f32_kernel<<<grid, 256, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const uint16_t*>(x), bf16, y, n);
  return launched("quant half-to-f32 activation conversion launch");
}

tc_status_t launch_fill_random_blocks(tc_dtype_t format, void* w, int64_t rows, int64_t k,
                                      uint64_t seed, void* stream) {
  const int fmt = format_code(format);
  if (fmt < 0) return TC_ERROR_UNSUPPORTED_DTYPE;
  const size_t blocks = size_t(rows) * size_t(k) / block_elems(fmt);
  const unsigned grid = unsigned((blocks + 255) / 256);
  fill_kernel<<<grid, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<uint8_t*>(w), blocks,
                                                                   fmt, seed);
  return launched("quant random-block fill launch");
}

tc_status_t launch_decode(const Args& a, void* stream, const char** name) {
  std::string why;
  const char* row = "cuda_quant_v1";
  tc_status_t st;
  if (a.w_dtype == TC_DTYPE_I8 && i8_gemv_supports(a, why)) {
    row = "cuda_gemv_i8";
    st = launch_i8_gemv(a, stream);
  } else if (a.act8 && a.M > 2 && mma_b32_preferred(a) &&
             mma_b32_supports(a, why)) {  // as the f16 MMA row (M >= 9, M 3..8 by shape class)
    row = "cuda_mma_b32_f16_wgmma";
    st = launch_mma_b32(a, stream);
  } else if (a.act8 && a.M > 2 && mma_f16_preferred(a) && mma_f16_supports(a, why)) {  // rows
    row = "cuda_mma_bulk_f16_hmma";
    st = launch_mma_f16(a, stream);
  } else if (a.act8 && a.M > 2 && mma_bulk_supports(a, why)) {
    row = "cuda_mma_bulk_q8_i8mma";
    st = launch_mma_bulk(a, stream);
  } else if (a.act8 && gemv_bulk_supports(a, why)) {
    row = "cuda_gemv_bulk_q8_dp4a";
    st = launch_gemv_bulk(a, stream);
  } else if (a.act8 && gemv_staged_q8_supports(a, why)) {
    row = "cuda_gemv_staged_q8_dp4a";
    st = launch_gemv_staged_q8(a, stream);
  } else if (a.act8 && gemv_q8_supports(a, why)) {
    row = "cuda_gemv_q8_dp4a";
    st = launch_gemv_q8(a, stream);
  } else if (gemv_staged_supports(a, why)) {
    row = "cuda_gemv_staged_f32";
    st = launch_gemv_staged(a, stream);
  } else if (gemv_supports(a, why)) {
    row = "cuda_gemv_quant_f32";
    st = launch_gemv(a, stream);
  } else if (mma_supports(a, why)) {
    row = "cuda_mma_quant_batch";
    st = launch_mma(a, stream);
  } else if (a.x_dtype == TC_DTYPE_F32 || a.x_dtype == TC_DTYPE_I8) {
    st = launch_v1(a, stream);
  } else {  // half-precision or Q8_0 X: only the 8-bit-activation kernels above read it
    row = "none";
    set_error_message(
        std::string("x_dtype ") + tc_dtype_name(a.x_dtype) +
        (a.x_dtype == TC_DTYPE_Q8_0
             ? " is read only by the bulk GEMV (M <= 4), which does not serve w_dtype " +
                   std::string(tc_dtype_name(a.w_dtype)) + ", act8 = "
             : " is read only by the bulk GEMV and batched-decode MMA kernels, and "
               "none serves act8 = ") +
        std::to_string(int(a.act8)) + ", M = " + std::to_string(a.M) +
        ", K = " + std::to_string(a.K));
    st = TC_ERROR_NOT_SUPPORTED;
  }
  if (name != nullptr) *name = row;
  return st;
}

}  // namespace tc::cuda::quant
