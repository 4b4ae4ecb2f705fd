// Register-A wgmma for the batched decode kernel (quant_mma_b32_kernel.cuh): D(64 x N, f32) +=
// A(64 x 16, f16, registers, the fragment layout of quant_prefill_wgmma.cuh) * B(16 x N, f16,
// shared memory, K-major, 128B-swizzled descriptor), N = 16 or 32 (X rows of the batch);
// accumulate = 0 overwrites D. All 128 threads of the warpgroup execute it.
#pragma once

#include <cstdint>

namespace tc::cuda::quant::b32 {

template <int N>
__device__ __forceinline__ void wgmma_rs_n(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db,
                                           uint32_t accumulate);

// clang-format off
template <>
__device__ __forceinline__ void wgmma_rs_n<16>(float (&d)[8], const uint32_t (&a)[4], uint64_t db,
                                              uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
}
template <>
__device__ __forceinline__ void wgmma_rs_n<32>(float (&d)[16], const uint32_t (&a)[4], uint64_t db,
                                              uint32_t accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
}
// clang-format on

}  // namespace tc::cuda::quant::b32
