// Quantized GEMM for M > 8 (prefill): W is dequantized panel by panel into f32 and each panel
// is multiplied with OpenBLAS sgemm, Y[:, n0:n0+nb] = X * panel^T. A panel holds about 512 KB
// (nb rows of K floats, nb in [16, 256]) so it stays in L2 while sgemm reads it M/tile times;
// the dequantization, O(N*K), is spread over the worker pool and is small next to the
// O(M*N*K) product once M is in the tens. Int8 activations are converted to f32 first.
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "cpu/thread_pool.h"
#include "quant/matmul.h"
#include "quant/quant.h"

namespace tc::cpu {

tc_status_t gemm_dequant_panel_sgemm(const quant::MatmulProblem& p) {
  const auto& d = p.d;
  const int64_t K = d.K;
  const bool w_i8 = d.w_dtype == TC_DTYPE_I8;
  const size_t row_bytes =
      w_i8 ? static_cast<size_t>(K) : quant::row_bytes(*quant::format_info(d.w_dtype), K);
  const int64_t nb = std::clamp<int64_t>((512 * 1024 / 4) / K / 8 * 8, 16, 256);

  std::vector<float> x_f32;
  const float* x = static_cast<const float*>(p.x);
  if (d.x_dtype == TC_DTYPE_I8) {
    x_f32.resize(static_cast<size_t>(d.M) * K);
    const auto* xq = static_cast<const int8_t*>(p.x);
    for (size_t i = 0; i < x_f32.size(); ++i) x_f32[i] = d.x_scale * xq[i];
    x = x_f32.data();
  }
  std::vector<float> panel(static_cast<size_t>(std::min<int64_t>(nb, d.N)) * K);
  for (int64_t n0 = 0; n0 < d.N; n0 += nb) {
    const int64_t rows = std::min(nb, d.N - n0);
    parallel_for(rows, 4, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* src = p.w + (n0 + r) * row_bytes;
        float* dst = panel.data() + r * K;
        if (w_i8) {
          const auto* q = reinterpret_cast<const int8_t*>(src);
          const float s = p.w_scales[n0 + r];
          for (int64_t k = 0; k < K; ++k) dst[k] = s * q[k];
        } else {
          quant::dequantize_row(d.w_dtype, src, dst, K);
        }
      }
    });
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d.M, static_cast<int>(rows), d.K, 1.0f, x,
                d.K, panel.data(), d.K, 0.0f, p.y + n0, d.N);
  }
  return TC_SUCCESS;
}

}  // namespace tc::cpu
