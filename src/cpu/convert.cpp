#include "cpu/convert.h"

#include <immintrin.h>

#include <cstring>

#include "core/dtype.h"
#include "cpu/cpu_features.h"

namespace tc::cpu {
namespace {

__attribute__((target("avx2,f16c"))) void f16_to_f32_f16c(const uint16_t* s, float* d, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  for (; i < n; ++i) d[i] = f16_to_f32(s[i]);
}

__attribute__((target("avx2,f16c"))) void f32_to_f16_f16c(const float* s, uint16_t* d, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) d[i] = f32_to_f16(s[i]);
}

__attribute__((target("avx2"))) void bf16_to_f32_avx2(const uint16_t* s, float* d, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), _mm256_slli_epi32(w, 16));
  }
  for (; i < n; ++i) d[i] = bf16_to_f32(s[i]);
}

}  // namespace

void to_f32(tc_dtype_t t, const void* src, float* dst, size_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  switch (t) {
    case TC_DTYPE_F32:
      std::memcpy(dst, src, n * 4);
      return;
    case TC_DTYPE_F16:
      if (has(TC_CPU_AVX2 | TC_CPU_F16C)) return f16_to_f32_f16c(s, dst, n);
      for (size_t i = 0; i < n; ++i) dst[i] = f16_to_f32(s[i]);
      return;
    case TC_DTYPE_BF16:
      if (has(TC_CPU_AVX2)) return bf16_to_f32_avx2(s, dst, n);
      for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      return;
    default:
      return;
  }
}

void from_f32(tc_dtype_t t, const float* src, void* dst, size_t n) {
  auto* d = static_cast<uint16_t*>(dst);
  switch (t) {
    case TC_DTYPE_F32:
      std::memcpy(dst, src, n * 4);
      return;
    case TC_DTYPE_F16:
      if (has(TC_CPU_AVX2 | TC_CPU_F16C)) return f32_to_f16_f16c(src, d, n);
      for (size_t i = 0; i < n; ++i) d[i] = f32_to_f16(src[i]);
      return;
    case TC_DTYPE_BF16:
      for (size_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]);
      return;
    default:
      return;
  }
}

}  // namespace tc::cpu
