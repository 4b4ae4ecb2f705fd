// Activation quantizer: d = max|x|/127 per 32 values, codes rounded to nearest (ties to even;
// activations are never compared byte-wise with ggml), so codes lie in [-127, 127] and a
// maddubs pair of 4-bit weights times codes (2 * 15 * 127) never saturates int16.
#include "cpu/quant_act.h"

#include <cstring>

#include "cpu/quant_simd.h"

namespace tc::cpu {
namespace {

// One 32-value block: stores its codes (element order) and returns d; *sum = sum of codes.
TC_AVX2 float quantize_block(const float* xb, int8_t* out, int32_t* sum) {
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
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
    q[i] = _mm256_cvtps_epi32(
        _mm256_round_ps(_mm256_mul_ps(v[i], id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  // Pack 32 int32 -> 32 int8 in order (packs interleave 128-bit lanes; the permute fixes it).
  const __m256i q01 = _mm256_packs_epi32(q[0], q[1]);
  const __m256i q23 = _mm256_packs_epi32(q[2], q[3]);
  __m256i q8 = _mm256_packs_epi16(q01, q23);
  q8 = _mm256_permutevar8x32_epi32(q8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), q8);
  const __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q8);  // pairwise sums
  const __m256i s32 = _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
  t = _mm_hadd_epi32(t, t);
  t = _mm_hadd_epi32(t, t);
  *sum = _mm_cvtsi128_si32(t);
  return d;
}

// Reorders one group of 256 codes from natural order into the q4_0_pairs order.
void to_q4_0_pairs(int8_t* g) {
  int8_t nat[256];
  std::memcpy(nat, g, sizeof nat);
  for (int i = 0; i < 4; ++i) {
    const int8_t* lo = nat + 32 * i;        // block i
    const int8_t* hi = nat + 32 * (i + 4);  // block i + 4
    std::memcpy(g + 64 * i, lo, 16);
    std::memcpy(g + 64 * i + 16, hi, 16);
    std::memcpy(g + 64 * i + 32, lo + 16, 16);
    std::memcpy(g + 64 * i + 48, hi + 16, 16);
  }
}

}  // namespace

void quantize_act_q8(const float* x, int M, int64_t K, ActLayout layout, ActQ8* a) {
  const int64_t nb = K / 32;
  a->nbp = (nb + 7) / 8 * 8;
  a->qs.assign(static_cast<size_t>(M * a->nbp * 32), 0);
  a->d.assign(static_cast<size_t>(M * a->nbp), 0.0f);
  a->sum8.assign(static_cast<size_t>(M * a->nbp), 0);
  a->dsum.assign(static_cast<size_t>(M * a->nbp), 0.0f);
  for (int m = 0; m < M; ++m) {
    const int64_t row = m * a->nbp;
    for (int64_t b = 0; b < nb; ++b) {
      int32_t sum = 0;
      a->d[row + b] = quantize_block(x + m * K + b * 32, &a->qs[(row + b) * 32], &sum);
      a->sum8[row + b] = 8 * sum;
      a->dsum[row + b] = a->d[row + b] * static_cast<float>(sum);
    }
    if (layout == ActLayout::q4_0_pairs) {
      for (int64_t g = 0; g < a->nbp; g += 8) to_q4_0_pairs(&a->qs[(row + g) * 32]);
    }
  }
}

}  // namespace tc::cpu
