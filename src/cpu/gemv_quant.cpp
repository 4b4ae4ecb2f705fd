// Decode GEMV with f32 activations kept f32, AVX2 + FMA, every block format (M <= 8).
// Per weight row, up to 256 values at a time are dequantized into a 1 KB tile that stays in
// L1 and are multiplied into all M activation rows with 8-wide FMAs, so each weight byte is
// read from memory once and the arithmetic stays exact f32 (rms_scaled ~1e-7 against float64
// of the dequantized weights). The AVX2 dequantizers reproduce the reference values exactly
// (integer code minus offset, then one multiply); Q6_K uses the reference dequantizer.
// This is the accurate path; gemv_quant_q8.cpp is the faster one with 8-bit activations.
#include "cpu/quant_simd.h"
#include "cpu/thread_pool.h"
#include "quant/fp16.h"
#include "quant/matmul.h"
#include "quant/quant.h"

namespace tc::cpu {
namespace {

using namespace tc::quant;

constexpr int kTile = 256;  // values per tile: 8 Q4_0/Q8_0 blocks or one K-quant super-block

TC_AVX2 inline void store_nibbles(__m128i v, __m256 d, __m256i offset, float* out) {
  const __m128i m4 = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(v, m4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m4);
  const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
  for (int i = 0; i < 4; ++i) {
    const __m256i q = _mm256_sub_epi32(_mm256_cvtepu8_epi32(parts[i]), offset);
    _mm256_storeu_ps(out + 8 * i, _mm256_mul_ps(_mm256_cvtepi32_ps(q), d));
  }
}

TC_AVX2 void dequant_q4_0(const uint8_t* src, int nblocks, float* out) {
  const auto* b = reinterpret_cast<const BlockQ4_0*>(src);
  for (int i = 0; i < nblocks; ++i) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(b[i].d));
    store_nibbles(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs)), d,
                  _mm256_set1_epi32(8), out + 32 * i);
  }
}

TC_AVX2 void dequant_q8_0(const uint8_t* src, int nblocks, float* out) {
  const auto* b = reinterpret_cast<const BlockQ8_0*>(src);
  for (int i = 0; i < nblocks; ++i) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(b[i].d));
    for (int j = 0; j < 4; ++j) {
      const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b[i].qs + 8 * j));
      _mm256_storeu_ps(out + 32 * i + 8 * j,
                       _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), d));
    }
  }
}

TC_AVX2 void dequant_q4_K(const uint8_t* src, int nblocks, float* out) {
  const auto* b = reinterpret_cast<const BlockQ4_K*>(src);
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  for (int i = 0; i < nblocks; ++i, out += 256) {
    const float d = _cvtsh_ss(b[i].d), dmin = _cvtsh_ss(b[i].dmin);
    for (int c = 0; c < 4; ++c) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qs + 32 * c));
      const __m256i halves[2] = {_mm256_and_si256(v, m4),
                                 _mm256_and_si256(_mm256_srli_epi16(v, 4), m4)};
      for (int h = 0; h < 2; ++h) {
        uint8_t sc, m;
        q4_K_scale_min(2 * c + h, b[i].scales, &sc, &m);
        const __m256 d1 = _mm256_set1_ps(d * sc), m1 = _mm256_set1_ps(dmin * m);
        const __m128i parts[2] = {_mm256_castsi256_si128(halves[h]),
                                  _mm256_extracti128_si256(halves[h], 1)};
        for (int p = 0; p < 2; ++p) {
          const __m128i q = parts[p];
          const __m128i qs[2] = {q, _mm_srli_si128(q, 8)};
          for (int k = 0; k < 2; ++k) {
            const __m256 f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(qs[k]));
            _mm256_storeu_ps(out + 64 * c + 32 * h + 16 * p + 8 * k,
                             _mm256_sub_ps(_mm256_mul_ps(d1, f), m1));
          }
        }
      }
    }
  }
}

void dequant_q6_K(const uint8_t* src, int nblocks, float* out) {
  dequantize_row_q6_K(reinterpret_cast<const BlockQ6_K*>(src), out, int64_t{nblocks} * 256);
}

// U independent accumulators per row hide the 4-cycle FMA latency: with M = 1 a single chain
// would cap the tile at one FMA per 4 cycles (measured 3x slower).
template <int M>
constexpr int kUnroll = M == 1   ? 4
                        : M == 2 ? 2
                                 : 1;

template <int M>
TC_AVX2 void dot_tile(const float* tile, int len, const float* x, int64_t K,
                      __m256 acc[][kUnroll<M>]) {
  constexpr int U = kUnroll<M>;
  int i = 0;
  for (; i + 8 * U <= len; i += 8 * U) {
    for (int u = 0; u < U; ++u) {
      const __m256 w = _mm256_loadu_ps(tile + i + 8 * u);
      for (int m = 0; m < M; ++m) {
        acc[m][u] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + m * K + i + 8 * u), acc[m][u]);
      }
    }
  }
  for (; i < len; i += 8) {  // len is a multiple of 32 (a block), so at most U-1 vectors here
    const __m256 w = _mm256_loadu_ps(tile + i);
    for (int m = 0; m < M; ++m)
      acc[m][0] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + m * K + i), acc[m][0]);
  }
}

using DequantFn = void (*)(const uint8_t*, int, float*);

template <int M>
TC_AVX2 void rows(const MatmulProblem& p, DequantFn dq, int block_elems, size_t block_bytes,
                  int64_t n0, int64_t n1) {
  const int64_t K = p.d.K;
  const size_t row_bytes = static_cast<size_t>(K / block_elems) * block_bytes;
  const auto* x = static_cast<const float*>(p.x);
  alignas(64) float tile[kTile];
  for (int64_t n = n0; n < n1; ++n) {
    __m256 acc[M][kUnroll<M>];
    for (int m = 0; m < M; ++m) {
      for (int u = 0; u < kUnroll<M>; ++u) acc[m][u] = _mm256_setzero_ps();
    }
    const uint8_t* w = p.w + n * row_bytes;
    for (int64_t k0 = 0; k0 < K; k0 += kTile) {
      const int len = static_cast<int>(K - k0 < kTile ? K - k0 : kTile);
      const int nblocks = len / block_elems;
      dq(w + (k0 / block_elems) * block_bytes, nblocks, tile);
      dot_tile<M>(tile, len, x + k0, K, acc);
    }
    for (int m = 0; m < M; ++m) {
      __m256 a = acc[m][0];
      for (int u = 1; u < kUnroll<M>; ++u) a = _mm256_add_ps(a, acc[m][u]);
      p.y[m * static_cast<int64_t>(p.d.N) + n] = hsum(a);
    }
  }
}

template <int M>
struct Rows {
  static void run(const MatmulProblem& p, DequantFn dq, int block_elems, size_t block_bytes,
                  int64_t n0, int64_t n1) {
    rows<M>(p, dq, block_elems, block_bytes, n0, n1);
  }
};

}  // namespace

tc_status_t gemv_block_f32_avx2(const MatmulProblem& p) {
  DequantFn dq = nullptr;
  switch (p.d.w_dtype) {
    case TC_DTYPE_Q4_0:
      dq = dequant_q4_0;
      break;
    case TC_DTYPE_Q8_0:
      dq = dequant_q8_0;
      break;
    case TC_DTYPE_Q4_K:
      dq = dequant_q4_K;
      break;
    case TC_DTYPE_Q6_K:
      dq = dequant_q6_K;
      break;
    default:
      return TC_ERROR_INTERNAL;
  }
  const FormatInfo& f = *format_info(p.d.w_dtype);
  parallel_for(
      p.d.N, 16,
      [&](int64_t n0, int64_t n1) {
        dispatch_m<Rows>(p.d.M, p, dq, f.block_elems, static_cast<size_t>(f.block_bytes), n0, n1);
      },
      After::kLinger);
  return TC_SUCCESS;
}

}  // namespace tc::cpu
