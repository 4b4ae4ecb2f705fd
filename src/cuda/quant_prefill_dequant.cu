// The prefill row's expansion passes, written for bandwidth: W (Q4_0, Q8_0, Q4_K) -> dense
// row-major [N,K] f16 and X f32 -> [M,K] f16. They are pure streams (Q4_0: 33 MB read, 117 MB
// written for a 4096 x 14336 matrix), so the one thing that matters is that every warp store
// is 512 contiguous bytes:
//  - one thread per 8 consecutive outputs (one 16-byte store), 32 threads covering one Q4_K
//    block or four Q4_0 / Q8_0 blocks; the packed bytes a thread needs are 8 contiguous bytes
//    (two-byte aligned for Q4_0 / Q8_0, so four u16 loads; one 8-byte load for Q4_K);
//  - the values are those of quant_v1's dequantize-W kernel (which wrote each 64-byte group
//    from one thread, four strided 16-byte stores per thread): Q4_0 as (q - 8) * d in half
//    arithmetic, exact before the one rounding, as the f32 product rounded to f16 was; Q8_0
//    and Q4_K in f32 with the reference's rounding, then rounded to f16.
// Other formats (Q6_K, I8) and I8 activations go to the quant_v1 launchers.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/quant_launch.cuh"
#include "cuda/tile/grid_dep.cuh"

namespace tc::cuda::quant {
namespace {

constexpr int kThreads = 256;

// Half2 of (low nibble of byte0, low nibble of byte1) - 8, exactly: 0x6400 | n is the half
// 1024 + n, and subtracting 1032 is exact.
__device__ __forceinline__ __half2 q4_pair(uint32_t two_bytes_spread) {
  const uint32_t h = (two_bytes_spread & 0x000F000Fu) | 0x64006400u;
  return __hsub2(*reinterpret_cast<const __half2*>(&h), __float2half2_rn(1032.0f));
}

__device__ __forceinline__ uint32_t h2_bits(__half2 v) {
  return *reinterpret_cast<const uint32_t*>(&v);
}

// Eight outputs k = e .. e + 7 of one row (e % 8 == 0), as four packed half2.
template <int FMT>
__device__ __forceinline__ uint4 decode8(const uint8_t* row, int e) {
  uint32_t h[4];
  if constexpr (FMT == kQ4_0) {
    // Block e / 32; quarter q: bytes 8 (q & 1) .. + 7, low nibbles (q < 2) or high nibbles.
    const uint8_t* b = row + 18 * (e / 32);
    const int q = (e % 32) / 8;
    const uint16_t* p = reinterpret_cast<const uint16_t*>(b + 2 + 8 * (q & 1));
    const __half2 d = __half2half2(__ushort_as_half(ld_u16(b)));
    const int shift = 4 * (q >> 1);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      // Bytes (2i, 2i + 1) spread to bits 0 and 16, then the wanted nibble moved down.
      const uint32_t v = uint32_t(p[i]);
      const uint32_t spread = ((v & 0xFFu) | ((v & 0xFF00u) << 8)) >> shift;
      h[i] = h2_bits(__hmul2(q4_pair(spread), d));
    }
  } else if constexpr (FMT == kQ8_0) {
    const uint8_t* b = row + 34 * (e / 32);
    const uint16_t* p = reinterpret_cast<const uint16_t*>(b + 2 + (e % 32));
    const float d = h2f(ld_u16(b));
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t v = uint32_t(p[i]);
      const float lo = __fmul_rn(float(int8_t(v & 0xFFu)), d);
      const float hi = __fmul_rn(float(int8_t(v >> 8)), d);
      h[i] = h2_bits(__floats2half2_rn(lo, hi));
    }
  } else {  // Q4_K: sub-block j = (e % 256) / 32, its 32 bytes' low (j even) or high nibbles
    const uint8_t* b = row + 144 * (e / 256);
    const int j = (e % 256) / 32, shift = 4 * (j & 1);
    const uint2 qv = *reinterpret_cast<const uint2*>(b + 16 + 32 * (j / 2) + (e % 32));
    int sc, m;
    q4k_scale_min(j, b + 4, &sc, &m);
    const float d1 = __fmul_rn(h2f(ld_u16(b)), float(sc));
    const float m1 = __fmul_rn(h2f(ld_u16(b + 2)), float(m));
    const uint32_t w[2] = {qv.x, qv.y};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t word = w[i / 2] >> (16 * (i & 1));
      const float lo = __fsub_rn(__fmul_rn(d1, float((word >> shift) & 15u)), m1);
      const float hi = __fsub_rn(__fmul_rn(d1, float((word >> (8 + shift)) & 15u)), m1);
      h[i] = h2_bits(__floats2half2_rn(lo, hi));
    }
  }
  return make_uint4(h[0], h[1], h[2], h[3]);
}

// Thread i writes outputs 8 i .. 8 i + 7 of the flattened [N,K] matrix (K % 32 == 0, so a
// thread never straddles rows).
template <int FMT>
__global__ void __launch_bounds__(kThreads)
    dequant_f16_kernel(const uint8_t* w, size_t row_bytes, uint32_t k8, uint32_t total8,
                       uint4* out) {
  const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= total8) return;
  const uint32_t n = i / k8, e = 8 * (i % k8);
  out[i] = decode8<FMT>(w + size_t(n) * row_bytes, int(e));
}

// Thread i converts elements 8 i .. 8 i + 7 (two 16-byte loads, one 16-byte store). The fused
// GEMM after it is launched under PDL: letting it be scheduled as soon as this grid's last
// wave has started overlaps its launch and set-up with the tail here (it waits for this grid's
// completion before reading X, griddepcontrol.wait).
__global__ void __launch_bounds__(kThreads)
    convert_x_f16_kernel(const float4* x, uint32_t total8, uint4* out) {
  tc::tile::grid_dep_launch_dependents();
  const uint32_t i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= total8) return;
  const float4 a = x[2 * i], b = x[2 * i + 1];
  out[i] = make_uint4(h2_bits(__floats2half2_rn(a.x, a.y)), h2_bits(__floats2half2_rn(a.z, a.w)),
                      h2_bits(__floats2half2_rn(b.x, b.y)), h2_bits(__floats2half2_rn(b.z, b.w)));
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

}  // namespace

tc_status_t launch_prefill_dequant_w_f16(const Args& a, void* out, void* stream) {
  const size_t total8 = size_t(a.N) * a.K / 8;
  const bool q4_0 = a.w_dtype == TC_DTYPE_Q4_0, q8_0 = a.w_dtype == TC_DTYPE_Q8_0;
  const bool q4_k = a.w_dtype == TC_DTYPE_Q4_K;
  // Q4_K reads 8-byte words of its 144-byte blocks: the rows must start 8-byte aligned.
  if (!(q4_0 || q8_0 || q4_k) || total8 >= (size_t(1) << 31) || !aligned16(out) ||
      reinterpret_cast<uintptr_t>(a.w) % (q4_k ? 8 : 2) != 0)
    return launch_dequant_w(a, true, out, stream);
  const unsigned blocks = unsigned((total8 + kThreads - 1) / kThreads);
  const uint32_t k8 = uint32_t(a.K / 8);
  auto s = static_cast<cudaStream_t>(stream);
  auto w = static_cast<const uint8_t*>(a.w);
  with_format(a.w_dtype, [&](auto fmt) {
    dequant_f16_kernel<decltype(fmt)::value><<<blocks, kThreads, 0, s>>>(
        w, w_row_bytes(a), k8, uint32_t(total8), static_cast<uint4*>(out));
  });
  return launched("quant prefill dequantize-W (f16) kernel launch");
}

tc_status_t launch_prefill_convert_x_f16(const Args& a, void* out, void* stream) {
  const size_t total = size_t(a.M) * a.K;
  if (a.x_dtype != TC_DTYPE_F32 || total % 8 != 0 || total / 8 >= (size_t(1) << 31) ||
      !aligned16(a.x) || !aligned16(out))
    return launch_convert_x(a, true, out, stream);
  const size_t total8 = total / 8;
  const unsigned blocks = unsigned((total8 + kThreads - 1) / kThreads);
  convert_x_f16_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float4*>(a.x), uint32_t(total8), static_cast<uint4*>(out));
  return launched("quant prefill convert-X (f16) kernel launch");
}

}  // namespace tc::cuda::quant
