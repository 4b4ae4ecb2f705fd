// Dequantizers (spec §1.3, §1.4, §1.7, §1.8). Evaluation order follows ggml's
// dequantize_row_* so that, compiled without FMA contraction, results are bit-identical.
#include "quant/fp16.h"
#include "quant/quant.h"

namespace tc::quant {

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t k) {
  for (int64_t b = 0; b < k / kQK; ++b, y += kQK) {
    const float d = fp16_to_f32(x[b].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>((x[b].qs[j] & 0x0f) - 8) * d;
      y[j + kQK / 2] = static_cast<float>((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t k) {
  for (int64_t b = 0; b < k / kQK; ++b, y += kQK) {
    const float d = fp16_to_f32(x[b].d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[b].qs[j]) * d;
  }
}

void dequantize_row_q4_K(const BlockQ4_K* x, float* y, int64_t k) {
  for (int64_t b = 0; b < k / kQK_K; ++b) {
    const float d = fp16_to_f32(x[b].d);
    const float dmin = fp16_to_f32(x[b].dmin);
    const uint8_t* q = x[b].qs;
    for (int c = 0; c < 4; ++c, q += 32) {  // chunk c: sub-blocks 2c (low) and 2c+1 (high)
      uint8_t sc, m;
      q4_K_scale_min(2 * c, x[b].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      q4_K_scale_min(2 * c + 1, x[b].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xf) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
    }
  }
}

void dequantize_row_q6_K(const BlockQ6_K* x, float* y, int64_t k) {
  for (int64_t b = 0; b < k / kQK_K; ++b) {
    const float d = fp16_to_f32(x[b].d);
    for (int e = 0; e < kQK_K; ++e) {
      const int n = e >> 7, l = e & 31, g = (e >> 5) & 3;
      const int lo = (x[b].ql[64 * n + l + 32 * (g & 1)] >> (4 * (g >> 1))) & 0xf;
      const int hi = (x[b].qh[32 * n + l] >> (2 * g)) & 3;
      const int q = (lo | (hi << 4)) - 32;
      y[e] = d * static_cast<float>(x[b].scales[e >> 4]) * static_cast<float>(q);
    }
    y += kQK_K;
  }
}

}  // namespace tc::quant
