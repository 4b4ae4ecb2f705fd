// Round-trip error bounds per format: quantize then dequantize random rows and check the
// per-block error against what each format's rounding allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "quant/fp16.h"
#include "quant/quant.h"

namespace tc::quant {
namespace {

std::vector<float> random_row(int64_t k, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> x(k);
  for (auto& v : x) v = dist(rng);
  return x;
}

TEST(QuantRoundTrip, Q4_0WithinOneStep) {
  const int64_t k = 32 * 97;
  for (float scale : {1e-3f, 1.0f, 300.0f}) {
    const auto x = random_row(k, 11, scale);
    std::vector<BlockQ4_0> q(k / 32);
    std::vector<float> y(k);
    quantize_row_q4_0(x.data(), q.data(), k);
    dequantize_row_q4_0(q.data(), y.data(), k);
    for (int64_t i = 0; i < k; ++i) {
      // Codes round to the nearest step except the positive-side extreme, which can clip by
      // one step; fp16 rounding of d adds at most 8 * 2^-11 * |d|.
      const float d = std::fabs(fp16_to_f32(q[i / 32].d));
      ASSERT_LE(std::fabs(x[i] - y[i]), 1.005f * d) << "element " << i << " scale " << scale;
    }
  }
}

TEST(QuantRoundTrip, Q8_0WithinHalfStep) {
  const int64_t k = 32 * 101;
  for (float scale : {1e-3f, 1.0f, 300.0f}) {
    const auto x = random_row(k, 12, scale);
    std::vector<BlockQ8_0> q(k / 32);
    std::vector<float> y(k);
    quantize_row_q8_0(x.data(), q.data(), k);
    dequantize_row_q8_0(q.data(), y.data(), k);
    for (int64_t i = 0; i < k; ++i) {
      // Half a step, plus 127 times the fp16 rounding of d (relative 2^-11, or 2^-25 absolute
      // where d is an fp16 subnormal).
      const float d = fp16_to_f32(q[i / 32].d);
      const float d_err = std::max(d / 2048, std::ldexp(1.0f, -25));
      ASSERT_LE(std::fabs(x[i] - y[i]), 0.5f * d + 127 * d_err) << "element " << i;
    }
  }
}

double rms_scaled(const std::vector<float>& x, const std::vector<float>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    den += double(x[i]) * x[i];
  }
  return std::sqrt(num) / (std::sqrt(den) + 1e-30);
}

TEST(QuantRoundTrip, Q4_KAndQ8_KRelativeError) {
  const int64_t k = 256 * 37;
  const auto x = random_row(k, 13, 2.0f);
  std::vector<BlockQ4_K> q(k / 256);
  std::vector<float> y(k);
  quantize_row_q4_K(x.data(), q.data(), k);
  dequantize_row_q4_K(q.data(), y.data(), k);
  // 4-bit codes on 32-element sub-blocks of Gaussian data: about 0.09 relative rms.
  EXPECT_LT(rms_scaled(x, y), 0.12);
  EXPECT_GT(rms_scaled(x, y), 0.01);  // a lossless result would mean the codes are not 4-bit

  std::vector<BlockQ8_K> a(k / 256);
  quantize_row_q8_K(x.data(), a.data(), k);
  for (int64_t i = 0; i < k; ++i) {
    const BlockQ8_K& b = a[i / 256];
    ASSERT_LE(std::fabs(x[i] - b.d * b.qs[i % 256]), 0.5f * std::fabs(b.d) * 1.0001f) << i;
  }
  for (const BlockQ8_K& b : a) {
    for (int g = 0; g < 16; ++g) {
      int s = 0;
      for (int i = 0; i < 16; ++i) s += b.qs[16 * g + i];
      ASSERT_EQ(s, b.bsums[g]);
    }
  }
}

TEST(QuantRoundTrip, ZeroBlocksStayZero) {
  std::vector<float> x(256, 0.0f), y(256, 1.0f);
  BlockQ4_0 q4[8];
  quantize_row_q4_0(x.data(), q4, 256);
  dequantize_row_q4_0(q4, y.data(), 256);
  for (float v : y) ASSERT_EQ(v, 0.0f);
  BlockQ4_K qk;
  quantize_row_q4_K(x.data(), &qk, 256);
  dequantize_row_q4_K(&qk, y.data(), 256);
  for (float v : y) ASSERT_EQ(v, 0.0f);
  BlockQ8_K a;
  std::memset(&a, 0x5a, sizeof a);
  quantize_row_q8_K(x.data(), &a, 256);
  EXPECT_EQ(a.d, 0.0f);
  for (int g = 0; g < 16; ++g) EXPECT_EQ(a.bsums[g], 0);
}

}  // namespace
}  // namespace tc::quant
