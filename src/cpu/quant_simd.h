// Helpers shared by the AVX2 quantized GEMV files (gemv_quant*.cpp): the target attribute,
// the horizontal sum and the switch that turns the runtime M (1..8 activation rows) into the
// compile-time M every kernel is instantiated for (the accumulators then live in registers).
#pragma once

#include <immintrin.h>

#include <cstdint>

#define TC_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace tc::cpu {

TC_AVX2 inline float hsum(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// Calls K<M>::run(args...) for the runtime M in 1..8 (larger M runs as 8; the callers' can_run
// bounds M <= 8).
template <template <int> class K, typename... Args>
void dispatch_m(int M, Args&&... args) {
  switch (M) {
    case 1:
      return K<1>::run(args...);
    case 2:
      return K<2>::run(args...);
    case 3:
      return K<3>::run(args...);
    case 4:
      return K<4>::run(args...);
    case 5:
      return K<5>::run(args...);
    case 6:
      return K<6>::run(args...);
    case 7:
      return K<7>::run(args...);
    default:
      return K<8>::run(args...);
  }
}

}  // namespace tc::cpu
