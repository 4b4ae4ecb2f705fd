// Decode GEMV with 8-bit activations, AVX2: Q4_0 x Q8_0, Q8_0 x Q8_0 and Q4_K x Q8_0 (spec
// §1.10). Weights stream once from memory; for each weight block the integer products of all
// M <= 8 activation rows are formed with maddubs/madd (32 products in two instructions).
//
// Q4_0/Q8_0 work on groups of 8 blocks: the eight 8-lane partial sums of a group are reduced
// with one hadd tree into a vector of 8 block sums, so the fp16 scales, the Q4_0 "-8" offset
// (subtracted as 8 * sum of the activation codes) and the float conversion cost one vector
// instruction per 8 blocks instead of per block; that is what moves these kernels from
// compute-bound toward the memory bound on a 2-core machine.
// Q4_K: activations use 32-value Q8_0 blocks (not ggml's 256-value Q8_K, whose coarser scale
// gives ~0.6% error on U(-1,1) data); each super-block's eight sub-block sums are reduced in
// one hadd tree and scaled by (6-bit scale * d * dy_j) in one vector FMA; the mins come from
// the activation block sums.
// Rows of W are split across the worker pool; each thread writes disjoint columns of Y.
#include <immintrin.h>

#include <cstring>

#include "cpu/quant_act.h"
#include "cpu/thread_pool.h"
#include "quant/matmul.h"
#include "quant/quant.h"

namespace tc::cpu {
namespace {

using quant::BlockQ4_0;
using quant::BlockQ4_K;
using quant::BlockQ8_0;

constexpr int64_t kRowGrain = 16;  // weight rows per scheduling unit

#define TC_AVX2 __attribute__((target("avx2,fma,f16c")))

// Eight vectors of 8 int32 partial sums -> one vector of their 8 totals, in order.
TC_AVX2 inline __m256i reduce8(const __m256i s[8]) {
  const __m256i h01 = _mm256_hadd_epi32(s[0], s[1]), h23 = _mm256_hadd_epi32(s[2], s[3]);
  const __m256i h45 = _mm256_hadd_epi32(s[4], s[5]), h67 = _mm256_hadd_epi32(s[6], s[7]);
  const __m256i a = _mm256_hadd_epi32(h01, h23), b = _mm256_hadd_epi32(h45, h67);
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                          _mm256_permute2x128_si256(a, b, 0x31));
}

TC_AVX2 inline float hsum(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// The fp16 scales of blocks [g, g+cnt) as 8 floats (zeros past cnt). Full groups insert the
// eight 16-bit scales into one register (a stack array would cost a store-forwarding stall).
template <typename Block>
TC_AVX2 inline __m256 group_scales(const Block* w, int cnt) {
  if (cnt == 8) {
    __m128i v = _mm_cvtsi32_si128(w[0].d);
    v = _mm_insert_epi16(v, w[1].d, 1);
    v = _mm_insert_epi16(v, w[2].d, 2);
    v = _mm_insert_epi16(v, w[3].d, 3);
    v = _mm_insert_epi16(v, w[4].d, 4);
    v = _mm_insert_epi16(v, w[5].d, 5);
    v = _mm_insert_epi16(v, w[6].d, 6);
    v = _mm_insert_epi16(v, w[7].d, 7);
    return _mm256_cvtph_ps(v);
  }
  alignas(16) uint16_t d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int b = 0; b < cnt; ++b) d[b] = w[b].d;
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d)));
}

template <int M>
TC_AVX2 void q4_0_rows(const BlockQ4_0* w0, size_t row_blocks, int64_t nb, const ActQ8_0& a,
                       float* y, int64_t ldy, int64_t n0, int64_t n1) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t n = n0; n < n1; ++n) {
    const BlockQ4_0* w = w0 + n * row_blocks;
    __m256 acc[M];
    for (int m = 0; m < M; ++m) acc[m] = _mm256_setzero_ps();
    for (int64_t g = 0; g < nb; g += 8) {
      const int cnt = static_cast<int>(nb - g < 8 ? nb - g : 8);
      __m256i qq[8];
      for (int b = 0; b < 8; ++b) {
        if (cnt == 8 || b < cnt) {
          const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[g + b].qs));
          // Low nibbles are elements 0..15, high nibbles 16..31: the 256-bit order of y.
          qq[b] = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), m4);
        } else {
          qq[b] = _mm256_setzero_si256();
        }
      }
      const __m256 dw = group_scales(w + g, cnt);
      for (int m = 0; m < M; ++m) {
        const int8_t* yq = &a.qs[(m * a.nbp + g) * 32];
        __m256i s[8];
        for (int b = 0; b < 8; ++b) {
          const __m256i yv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yq + 32 * b));
          s[b] = _mm256_madd_epi16(_mm256_maddubs_epi16(qq[b], yv), ones);
        }
        const __m256i corr =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&a.corr[m * a.nbp + g]));
        const __m256 sums = _mm256_cvtepi32_ps(_mm256_sub_epi32(reduce8(s), corr));
        const __m256 scale = _mm256_mul_ps(dw, _mm256_loadu_ps(&a.d[m * a.nbp + g]));
        acc[m] = _mm256_fmadd_ps(sums, scale, acc[m]);
      }
    }
    for (int m = 0; m < M; ++m) y[m * ldy + n] = hsum(acc[m]);
  }
}

template <int M>
TC_AVX2 void q8_0_rows(const BlockQ8_0* w0, size_t row_blocks, int64_t nb, const ActQ8_0& a,
                       float* y, int64_t ldy, int64_t n0, int64_t n1) {
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t n = n0; n < n1; ++n) {
    const BlockQ8_0* w = w0 + n * row_blocks;
    __m256 acc[M];
    for (int m = 0; m < M; ++m) acc[m] = _mm256_setzero_ps();
    for (int64_t g = 0; g < nb; g += 8) {
      const int cnt = static_cast<int>(nb - g < 8 ? nb - g : 8);
      __m256i qq[8], aq[8];
      for (int b = 0; b < 8; ++b) {
        qq[b] = cnt == 8 || b < cnt
                    ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[g + b].qs))
                    : _mm256_setzero_si256();
        aq[b] = _mm256_sign_epi8(qq[b], qq[b]);  // |w| as unsigned; the sign moves to y
      }
      const __m256 dw = group_scales(w + g, cnt);
      for (int m = 0; m < M; ++m) {
        const int8_t* yq = &a.qs[(m * a.nbp + g) * 32];
        __m256i s[8];
        for (int b = 0; b < 8; ++b) {
          const __m256i yv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yq + 32 * b));
          s[b] = _mm256_madd_epi16(_mm256_maddubs_epi16(aq[b], _mm256_sign_epi8(yv, qq[b])), ones);
        }
        const __m256 sums = _mm256_cvtepi32_ps(reduce8(s));
        const __m256 scale = _mm256_mul_ps(dw, _mm256_loadu_ps(&a.d[m * a.nbp + g]));
        acc[m] = _mm256_fmadd_ps(sums, scale, acc[m]);
      }
    }
    for (int m = 0; m < M; ++m) y[m * ldy + n] = hsum(acc[m]);
  }
}

// The 8 scales and 8 mins of a Q4_K super-block as bytes 0..7 and 8..15 (get_scale_min_k4 on
// 32-bit words).
inline void q4_K_unpack_scales(const uint8_t* packed, uint8_t out[16]) {
  uint32_t u[4];
  std::memcpy(u, packed, 12);
  constexpr uint32_t k1 = 0x3f3f3f3f, k2 = 0x0f0f0f0f, k3 = 0x03030303;
  u[3] = ((u[2] >> 4) & k2) | (((u[1] >> 6) & k3) << 4);
  const uint32_t mins_lo = u[1] & k1;
  u[1] = (u[2] & k2) | (((u[0] >> 6) & k3) << 4);
  u[2] = mins_lo;
  u[0] &= k1;
  std::memcpy(out, u, 16);
}

template <int M>
TC_AVX2 void q4_K_rows(const BlockQ4_K* w0, size_t row_blocks, int64_t nsb, const ActQ8_0& a,
                       float* y, int64_t ldy, int64_t n0, int64_t n1) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t n = n0; n < n1; ++n) {
    const BlockQ4_K* w = w0 + n * row_blocks;
    __m256 acc[M], acc_min[M];
    for (int m = 0; m < M; ++m) acc[m] = acc_min[m] = _mm256_setzero_ps();
    for (int64_t s = 0; s < nsb; ++s) {
      const BlockQ4_K& b = w[s];
      alignas(16) uint8_t sm[16];
      q4_K_unpack_scales(b.scales, sm);
      const __m128i sm_v = _mm_load_si128(reinterpret_cast<const __m128i*>(sm));
      const __m256 scale = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sm_v)),
                                         _mm256_set1_ps(_cvtsh_ss(b.d)));
      const __m256 mins = _mm256_mul_ps(
          _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(sm_v, 8))),
          _mm256_set1_ps(_cvtsh_ss(b.dmin) * 0.125f));  // 1/8: corr holds 8 * code sums
      __m256i lo[4], hi[4];
      for (int c = 0; c < 4; ++c) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * c));
        lo[c] = _mm256_and_si256(v, m4);
        hi[c] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
      }
      for (int m = 0; m < M; ++m) {
        const int64_t blk = m * a.nbp + s * 8;  // activation block of sub-block 0
        const int8_t* yq = &a.qs[blk * 32];
        __m256i p[8];
        for (int c = 0; c < 4; ++c) {
          const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yq + 64 * c));
          const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yq + 64 * c + 32));
          p[2 * c] = _mm256_madd_epi16(_mm256_maddubs_epi16(lo[c], y0), ones);
          p[2 * c + 1] = _mm256_madd_epi16(_mm256_maddubs_epi16(hi[c], y1), ones);
        }
        const __m256 dy = _mm256_loadu_ps(&a.d[blk]);
        acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(reduce8(p)), _mm256_mul_ps(scale, dy), acc[m]);
        // Mins: M_j * dmin * dy_j * (sum of sub-block j's codes), the sum being corr_j / 8.
        const __m256 ysum =
            _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(&a.corr[blk])));
        acc_min[m] = _mm256_fmadd_ps(_mm256_mul_ps(mins, dy), ysum, acc_min[m]);
      }
    }
    for (int m = 0; m < M; ++m) y[m * ldy + n] = hsum(_mm256_sub_ps(acc[m], acc_min[m]));
  }
}

// Dispatches the runtime M (1..8) to the instantiated kernel.
template <template <int> class K, typename... Args>
void by_m(int M, Args&&... args) {
  switch (M) {
    case 1:
      K<1>::run(args...);
      break;
    case 2:
      K<2>::run(args...);
      break;
    case 3:
      K<3>::run(args...);
      break;
    case 4:
      K<4>::run(args...);
      break;
    case 5:
      K<5>::run(args...);
      break;
    case 6:
      K<6>::run(args...);
      break;
    case 7:
      K<7>::run(args...);
      break;
    default:
      K<8>::run(args...);
      break;
  }
}

template <int M>
struct Q4_0K {
  static void run(const BlockQ4_0* w, size_t rb, int64_t nb, const ActQ8_0& a, float* y,
                  int64_t ldy, int64_t n0, int64_t n1) {
    q4_0_rows<M>(w, rb, nb, a, y, ldy, n0, n1);
  }
};
template <int M>
struct Q8_0K {
  static void run(const BlockQ8_0* w, size_t rb, int64_t nb, const ActQ8_0& a, float* y,
                  int64_t ldy, int64_t n0, int64_t n1) {
    q8_0_rows<M>(w, rb, nb, a, y, ldy, n0, n1);
  }
};
template <int M>
struct Q4_KK {
  static void run(const BlockQ4_K* w, size_t rb, int64_t nsb, const ActQ8_0& a, float* y,
                  int64_t ldy, int64_t n0, int64_t n1) {
    q4_K_rows<M>(w, rb, nsb, a, y, ldy, n0, n1);
  }
};

}  // namespace

tc_status_t gemv_q4_0_q8_0_avx2(const quant::MatmulProblem& p) {
  const auto& d = p.d;
  ActQ8_0 a;
  quantize_act_q8_0(static_cast<const float*>(p.x), d.M, d.K, &a);
  const auto* w = reinterpret_cast<const BlockQ4_0*>(p.w);
  const int64_t nb = d.K / 32;
  parallel_for(d.N, kRowGrain, [&](int64_t n0, int64_t n1) {
    by_m<Q4_0K>(d.M, w, static_cast<size_t>(nb), nb, a, p.y, int64_t{d.N}, n0, n1);
  });
  return TC_SUCCESS;
}

tc_status_t gemv_q8_0_q8_0_avx2(const quant::MatmulProblem& p) {
  const auto& d = p.d;
  ActQ8_0 a;
  quantize_act_q8_0(static_cast<const float*>(p.x), d.M, d.K, &a);
  const auto* w = reinterpret_cast<const BlockQ8_0*>(p.w);
  const int64_t nb = d.K / 32;
  parallel_for(d.N, kRowGrain, [&](int64_t n0, int64_t n1) {
    by_m<Q8_0K>(d.M, w, static_cast<size_t>(nb), nb, a, p.y, int64_t{d.N}, n0, n1);
  });
  return TC_SUCCESS;
}

tc_status_t gemv_q4_k_q8_0_avx2(const quant::MatmulProblem& p) {
  const auto& d = p.d;
  ActQ8_0 a;  // 32-value activation blocks: 8x finer scales than Q8_K, ~0.4% error
  quantize_act_q8_0(static_cast<const float*>(p.x), d.M, d.K, &a);
  const auto* w = reinterpret_cast<const BlockQ4_K*>(p.w);
  const int64_t nsb = d.K / 256;
  parallel_for(d.N, kRowGrain, [&](int64_t n0, int64_t n1) {
    by_m<Q4_KK>(d.M, w, static_cast<size_t>(nsb), nsb, a, p.y, int64_t{d.N}, n0, n1);
  });
  return TC_SUCCESS;
}

}  // namespace tc::cpu
