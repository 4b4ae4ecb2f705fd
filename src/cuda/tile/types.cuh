// Fixed-width integers, 16-bit float storage types and conversions for device code.
// Compiles under NVRTC, which ships no standard headers: nothing here includes one.
// Conversions use PTX cvt (round to nearest even), so the result does not depend on
// cuda_fp16.h / cuda_bf16.h being present.
#pragma once

namespace tc::tile {

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

// Storage-only 16-bit float types: the bits, tagged by format so they cannot be mixed up.
struct bf16 {
  u16 bits;
};
struct f16 {
  u16 bits;
};

template <class A, class B>
struct is_same {
  static constexpr bool value = false;
};
template <class A>
struct is_same<A, A> {
  static constexpr bool value = true;
};

static_assert(sizeof(i64) == 8 && sizeof(u32) == 4 && sizeof(bf16) == 2, "int sizes");

__device__ __forceinline__ float to_f32(bf16 x) {
  return __uint_as_float(u32(x.bits) << 16);
}
__device__ __forceinline__ float to_f32(f16 x) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
}
__device__ __forceinline__ float to_f32(float x) {
  return x;
}

template <class T>
__device__ __forceinline__ T from_f32(float x);
template <>
__device__ __forceinline__ float from_f32<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ bf16 from_f32<bf16>(float x) {
  u16 h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return bf16{h};
}
template <>
__device__ __forceinline__ f16 from_f32<f16>(float x) {
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return f16{h};
}

// Two floats packed into one 32-bit register of two 16-bit values (lo = first element).
template <class T>
__device__ __forceinline__ u32 pack2(float lo, float hi);
template <>
__device__ __forceinline__ u32 pack2<bf16>(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
template <>
__device__ __forceinline__ u32 pack2<f16>(float lo, float hi) {
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ u32 smem_addr(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}

}  // namespace tc::tile
