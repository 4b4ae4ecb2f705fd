// Activation quantizer: d = max|x|/127 per 32 values, codes rounded to nearest (ties to even;
// activations are never compared byte-wise with ggml), so codes lie in [-127, 127] and a
// maddubs pair of 4-bit weights times codes (2 * 15 * 127) never saturates int16.
#include "cpu/quant_act.h"

#include <cstring>

#include "cpu/quant_simd.h"

namespace tc::cpu {
namespace {

// One 32-value block: stores its 32 codes (element order) as two halves, lo = elements 0..15 and
// hi = 16..31 (the layouts place them apart), and returns d; *sum = sum of codes.
TC_AVX2 float quantize_block(const float* xb, int8_t* lo, int8_t* hi, int32_t* sum) {
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
  // The sum from the int32 codes (no int8 round trip, no hadd).
  const __m256i s8 = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
  t = _mm_add_epi32(t, _mm_unpackhi_epi64(t, t));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 1));
  *sum = _mm_cvtsi128_si32(t);
  // Pack 32 int32 -> 32 int8 in order (packs interleave 128-bit lanes; the permute fixes it).
  const __m256i q01 = _mm256_packs_epi32(q[0], q[1]);
  const __m256i q23 = _mm256_packs_epi32(q[2], q[3]);
  __m256i q8 = _mm256_packs_epi16(q01, q23);
  q8 = _mm256_permutevar8x32_epi32(q8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lo), _mm256_castsi256_si128(q8));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hi), _mm256_extracti128_si256(q8, 1));
  return d;
}

// Where block b (0..7) of a group of 256 codes puts its halves: natural, block after block; in
// q4_0_pairs, pair b % 4 holds [block b%4 lo, block b%4+4 lo, block b%4 hi, block b%4+4 hi].
struct Halves {
  int lo, hi;
};
Halves halves(ActLayout layout, int64_t b) {
  const int i = static_cast<int>(b % 8);
  if (layout == ActLayout::natural) return {32 * i, 32 * i + 16};
  const int lo = 64 * (i % 4) + 16 * (i / 4);
  return {lo, lo + 32};
}

}  // namespace

void quantize_act_q8(const float* x, int M, int64_t K, ActLayout layout, ActQ8* a) {
  const int64_t nb = K / 32;
  a->nbp = (nb + 7) / 8 * 8;
  // Sized, not cleared: every block below nb is written; only the padding blocks are zeroed.
  // (A call's vectors are reused by the next one: no allocation in a decode loop.)
  a->qs.resize(static_cast<size_t>(M * a->nbp * 32));
  a->d.resize(static_cast<size_t>(M * a->nbp));
  a->sum8.resize(static_cast<size_t>(M * a->nbp));
  a->dsum.resize(static_cast<size_t>(M * a->nbp));
  for (int m = 0; m < M; ++m) {
    const int64_t row = m * a->nbp;
    for (int64_t b = 0; b < nb; ++b) {
      int8_t* group = &a->qs[(row + b / 8 * 8) * 32];
      const Halves h = halves(layout, b);
      int32_t sum = 0;
      const float d = quantize_block(x + m * K + b * 32, group + h.lo, group + h.hi, &sum);
      a->d[row + b] = d;
      a->sum8[row + b] = 8 * sum;
      a->dsum[row + b] = d * static_cast<float>(sum);
    }
    for (int64_t b = nb; b < a->nbp; ++b) {  // padding: zero codes, scales and sums
      int8_t* group = &a->qs[(row + b / 8 * 8) * 32];
      const Halves h = halves(layout, b);
      std::memset(group + h.lo, 0, 16);
      std::memset(group + h.hi, 0, 16);
      a->d[row + b] = 0.0f;
      a->sum8[row + b] = 0;
      a->dsum[row + b] = 0.0f;
    }
  }
}

}  // namespace tc::cpu
