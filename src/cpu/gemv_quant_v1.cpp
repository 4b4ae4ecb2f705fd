// v1 quantized GEMV/GEMM: the simple first kernel of the family, kept as a tested fallback row
// (TC_Q4_USE_V1=1 selects it) and as the path of CPUs without AVX2. Per weight row it
// dequantizes one block at a time with the reference dequantizer and dots it with every
// activation row in plain scalar code. Any format, any M; rows of W split across threads.
#include <vector>

#include "cpu/thread_pool.h"
#include "quant/matmul.h"
#include "quant/quant.h"

namespace tc::cpu {

tc_status_t gemv_quant_v1(const quant::MatmulProblem& p) {
  const auto& d = p.d;
  const bool w_i8 = d.w_dtype == TC_DTYPE_I8;
  const quant::FormatInfo* f = w_i8 ? nullptr : quant::format_info(d.w_dtype);
  const int64_t be = w_i8 ? d.K : f->block_elems;
  const size_t row_bytes = w_i8 ? static_cast<size_t>(d.K) : quant::row_bytes(*f, d.K);
  const size_t block_bytes = w_i8 ? static_cast<size_t>(d.K) : static_cast<size_t>(f->block_bytes);
  const bool x_i8 = d.x_dtype == TC_DTYPE_I8;
  parallel_for(d.N, 8, [&](int64_t n0, int64_t n1) {
    std::vector<float> wb(be);
    std::vector<float> acc(d.M);
    for (int64_t n = n0; n < n1; ++n) {
      const uint8_t* wrow = p.w + n * row_bytes;
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t k0 = 0; k0 < d.K; k0 += be) {
        if (w_i8) {
          const auto* q = reinterpret_cast<const int8_t*>(wrow);
          for (int64_t i = 0; i < be; ++i) wb[i] = q[i];
        } else {
          quant::dequantize_row(d.w_dtype, wrow + (k0 / be) * block_bytes, wb.data(), be);
        }
        for (int m = 0; m < d.M; ++m) {
          float s = 0;
          if (x_i8) {
            const int8_t* x = static_cast<const int8_t*>(p.x) + m * static_cast<int64_t>(d.K) + k0;
            for (int64_t i = 0; i < be; ++i) s += wb[i] * static_cast<float>(x[i]);
          } else {
            const float* x = static_cast<const float*>(p.x) + m * static_cast<int64_t>(d.K) + k0;
            for (int64_t i = 0; i < be; ++i) s += wb[i] * x[i];
          }
          acc[m] += s;
        }
      }
      const float scale = (w_i8 ? p.w_scales[n] : 1.0f) * (x_i8 ? d.x_scale : 1.0f);
      for (int m = 0; m < d.M; ++m) p.y[m * static_cast<int64_t>(d.N) + n] = acc[m] * scale;
    }
  });
  return TC_SUCCESS;
}

}  // namespace tc::cpu
