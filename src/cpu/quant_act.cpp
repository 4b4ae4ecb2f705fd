// Activation quantizer: d = max|x|/127 per 32 values, codes rounded to nearest (ties to even;
// activations are never compared byte-wise with ggml), so codes lie in [-127, 127].
#include "cpu/quant_act.h"

#include <immintrin.h>

namespace tc::cpu {

__attribute__((target("avx2,fma,f16c"))) void quantize_act_q8_0(const float* x, int M, int64_t K,
                                                                ActQ8_0* a) {
  const int64_t nb = K / 32;
  a->nbp = (nb + 7) / 8 * 8;
  a->qs.assign(static_cast<size_t>(M * a->nbp * 32), 0);
  a->d.assign(static_cast<size_t>(M * a->nbp), 0.0f);
  a->corr.assign(static_cast<size_t>(M * a->nbp), 0);
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  for (int m = 0; m < M; ++m) {
    for (int64_t b = 0; b < nb; ++b) {
      const float* xb = x + m * K + b * 32;
      __m256 v[4];
      __m256 amax = _mm256_setzero_ps();
      for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_loadu_ps(xb + 8 * i);
        amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_mask, v[i]));
      }
      __m128 h = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
      h = _mm_max_ps(h, _mm_movehl_ps(h, h));
      h = _mm_max_ss(h, _mm_movehdup_ps(h));
      const float d = _mm_cvtss_f32(h) / 127.0f;
      const __m256 id = _mm256_set1_ps(d != 0 ? 1.0f / d : 0.0f);
      __m256i q[4];
      for (int i = 0; i < 4; ++i) {
        q[i] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[i], id),
                                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
      // Pack 32 int32 -> 32 int8 in order (packs interleave 128-bit lanes; permute fixes it).
      const __m256i q01 = _mm256_packs_epi32(q[0], q[1]);
      const __m256i q23 = _mm256_packs_epi32(q[2], q[3]);
      __m256i q8 = _mm256_packs_epi16(q01, q23);
      q8 = _mm256_permutevar8x32_epi32(q8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(&a->qs[(m * a->nbp + b) * 32]), q8);
      const __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q8);  // pairwise sums
      const __m256i s32 = _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
      __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
      t = _mm_hadd_epi32(t, t);
      t = _mm_hadd_epi32(t, t);
      a->d[m * a->nbp + b] = d;
      a->corr[m * a->nbp + b] = 8 * _mm_cvtsi128_si32(t);
    }
  }
}

}  // namespace tc::cpu
