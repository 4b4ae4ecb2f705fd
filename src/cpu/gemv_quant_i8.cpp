// Int8 weights with an f32 scale per row (the Foundry document's matvec_q8 / gemm_q8), AVX2,
// M <= 8: y[m,n] = w_scales[n] * sum_k Wq[n,k] * x[m,k], with x f32, or x = x_scale * Xq int8.
// Any K (a scalar tail covers K % 16). The int8 x int8 path widens to int16 and uses madd, so
// every int8 value (-128 included) is exact; int32 partial sums are flushed to f32 every 8192
// values (8192 * 2 * 128 * 128 < 2^31).
#include "cpu/quant_simd.h"
#include "cpu/thread_pool.h"
#include "quant/matmul.h"

namespace tc::cpu {
namespace {

template <int M>
TC_AVX2 void f32_rows(const quant::MatmulProblem& p, int64_t n0, int64_t n1) {
  const int64_t K = p.d.K, K16 = K / 16 * 16;
  const auto* x = static_cast<const float*>(p.x);
  for (int64_t n = n0; n < n1; ++n) {
    const int8_t* w = reinterpret_cast<const int8_t*>(p.w) + n * K;
    __m256 acc[M];
    for (int m = 0; m < M; ++m) acc[m] = _mm256_setzero_ps();
    for (int64_t k = 0; k < K16; k += 16) {
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k));
      const __m256 w0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q));
      const __m256 w1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(q, 8)));
      for (int m = 0; m < M; ++m) {
        acc[m] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + m * K + k), acc[m]);
        acc[m] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + m * K + k + 8), acc[m]);
      }
    }
    for (int m = 0; m < M; ++m) {
      float s = hsum(acc[m]);
      for (int64_t k = K16; k < K; ++k) s += static_cast<float>(w[k]) * x[m * K + k];
      p.y[m * static_cast<int64_t>(p.d.N) + n] = s * p.w_scales[n];
    }
  }
}

template <int M>
TC_AVX2 void i8_rows(const quant::MatmulProblem& p, int64_t n0, int64_t n1) {
  constexpr int64_t kFlush = 8192;
  const int64_t K = p.d.K, K16 = K / 16 * 16;
  const auto* x = static_cast<const int8_t*>(p.x);
  for (int64_t n = n0; n < n1; ++n) {
    const int8_t* w = reinterpret_cast<const int8_t*>(p.w) + n * K;
    __m256 acc[M];
    for (int m = 0; m < M; ++m) acc[m] = _mm256_setzero_ps();
    for (int64_t k0 = 0; k0 < K16; k0 += kFlush) {
      const int64_t k1 = k0 + kFlush < K16 ? k0 + kFlush : K16;
      __m256i iacc[M];
      for (int m = 0; m < M; ++m) iacc[m] = _mm256_setzero_si256();
      for (int64_t k = k0; k < k1; k += 16) {
        const __m256i w16 =
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k)));
        for (int m = 0; m < M; ++m) {
          const __m256i x16 = _mm256_cvtepi8_epi16(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + m * K + k)));
          iacc[m] = _mm256_add_epi32(iacc[m], _mm256_madd_epi16(w16, x16));
        }
      }
      for (int m = 0; m < M; ++m) acc[m] = _mm256_add_ps(acc[m], _mm256_cvtepi32_ps(iacc[m]));
    }
    for (int m = 0; m < M; ++m) {
      float s = hsum(acc[m]);
      int32_t tail = 0;
      for (int64_t k = K16; k < K; ++k) tail += int32_t{w[k]} * x[m * K + k];
      s += static_cast<float>(tail);
      p.y[m * static_cast<int64_t>(p.d.N) + n] = s * p.w_scales[n] * p.d.x_scale;
    }
  }
}

template <template <int> class R>
tc_status_t run_by_m(const quant::MatmulProblem& p) {
  parallel_for(
      p.d.N, 16, [&](int64_t n0, int64_t n1) { dispatch_m<R>(p.d.M, p, n0, n1); }, After::kLinger);
  return TC_SUCCESS;
}

template <int M>
struct F32Rows {
  static void run(const quant::MatmulProblem& p, int64_t n0, int64_t n1) { f32_rows<M>(p, n0, n1); }
};
template <int M>
struct I8Rows {
  static void run(const quant::MatmulProblem& p, int64_t n0, int64_t n1) { i8_rows<M>(p, n0, n1); }
};

}  // namespace

tc_status_t gemv_i8_f32_avx2(const quant::MatmulProblem& p) {
  return run_by_m<F32Rows>(p);
}
tc_status_t gemv_i8_i8_avx2(const quant::MatmulProblem& p) {
  return run_by_m<I8Rows>(p);
}

}  // namespace tc::cpu
