// Byte-exact blocks against the spec's test vectors (shared/specs/quant-formats.md §1.9), which
// were produced by ggml's ggml_quantize_chunk (no imatrix, no FMA contraction).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "quant/quant.h"

namespace tc::quant {
namespace {

std::vector<float> spec_input() {
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) x[i] = static_cast<float>(((i * 37) % 101) - 50) / 25.0f;
  return x;
}

std::string hex(const void* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t b = static_cast<const uint8_t*>(p)[i];
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    out.push_back(std::stoi(s.substr(i, 2), nullptr, 16));
  return out;
}

const std::string kQ4_K =
    "651ce627fefffffcfffdfefecfdcfffea0156bc1278cd3489e045ab0167bc237"
    "8de349ae056ab1267cd2389de459af15268ce248ad0459b0157bd1379ce348ae"
    "046ac0267bd2379df359be156ac1268c9df359be157ac1268ce248ad0459b015"
    "7bd1379ce348ae046ac0267bd2379df3156ac1268cd2489df459b0157bc1378c"
    "e348ae046ab0267bd2379de359ae156a";

const std::string kQ6_K =
    "d158bf37be25ad048b047bf37ad159d0c941ea63eb74fb741d951ea72fc841c9"
    "bf35ad169b048df26be069d147cf38bd1a922c840d85ed77ff57d038b04aa22b"
    "67df58c139b22aa22b931c85fd76ee57ce5ad137b31a902c830f86ec78ff55d1"
    "c841da62eb63fc840d951ea63fb840c9d129b30b931c74fe86de67ff47d129b1"
    "18b1c66cb11b6c861b71c61cb1c76cb22453f9248ef9138ef4538d2452f9248e"
    "d4a209d47e09a37e14a349d4ae09d77ec863be1463c9147ec923bec463bd1463"
    "807f897a867a84877f737d7a81877c892290";

TEST(QuantVectors, Q4_0Block0) {
  const auto x = spec_input();
  BlockQ4_0 b;
  quantize_row_q4_0(x.data(), &b, 32);
  EXPECT_EQ(hex(&b, sizeof b), "0034e046acf258bd1379df358be046acf268");
  float y[32];
  dequantize_row_q4_0(&b, y, 32);
  EXPECT_EQ(y[0], -2.0f);
  EXPECT_EQ(y[1], -0.5f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.5f);
}

TEST(QuantVectors, Q8_0Block0) {
  const auto x = spec_input();
  BlockQ8_0 b;
  quantize_row_q8_0(x.data(), &b, 32);
  EXPECT_EQ(hex(&b, sizeof b),
            "082481df3d9af856b41270cd2b89e745a2005ebb1977d53390ee4caa0866c3217fdc");
  float y[32];
  dequantize_row_q8_0(&b, y, 32);
  EXPECT_FLOAT_EQ(y[0], -1.99987793f);
  EXPECT_FLOAT_EQ(y[1], -0.51965332f);
  EXPECT_FLOAT_EQ(y[2], 0.960571289f);
  EXPECT_FLOAT_EQ(y[3], -1.60620117f);
}

TEST(QuantVectors, Q4_KSuperBlock) {
  const auto x = spec_input();
  BlockQ4_K b;
  quantize_row_q4_K(x.data(), &b, 256);
  EXPECT_EQ(hex(&b, sizeof b), kQ4_K);
  float y[256];
  dequantize_row_q4_K(&b, y, 256);
  EXPECT_FLOAT_EQ(y[0], -1.9437561f);
  EXPECT_FLOAT_EQ(y[1], -0.613380432f);
  EXPECT_FLOAT_EQ(y[2], 0.983070374f);
  EXPECT_FLOAT_EQ(y[3], -1.67768097f);
  float sum = 0;  // sequential float sum, as the spec's generator printed it
  for (float v : y) sum += v;
  EXPECT_NEAR(sum, -1.69532776f, 1e-5f);
}

TEST(QuantVectors, Q6_KDequant) {
  const auto bytes = unhex(kQ6_K);
  ASSERT_EQ(bytes.size(), sizeof(BlockQ6_K));
  BlockQ6_K b;
  std::memcpy(&b, bytes.data(), sizeof b);
  float y[256];
  dequantize_row_q6_K(&b, y, 256);
  EXPECT_FLOAT_EQ(y[0], -2.00183105f);
  EXPECT_FLOAT_EQ(y[1], -0.516601562f);
  EXPECT_FLOAT_EQ(y[2], 0.96862793f);
  EXPECT_FLOAT_EQ(y[3], -1.61437988f);
  // Q6_K has 64 levels per 16-element group: every value of the spec input is close.
  const auto x = spec_input();
  for (int i = 0; i < 256; ++i) EXPECT_NEAR(y[i], x[i], 0.05f) << "element " << i;
}

TEST(QuantVectors, GenericEntryPointsMatchTyped) {
  const auto x = spec_input();
  BlockQ4_K a, b;
  quantize_row_q4_K(x.data(), &a, 256);
  ASSERT_TRUE(quantize_row(TC_DTYPE_Q4_K, x.data(), &b, 256));
  EXPECT_EQ(hex(&a, sizeof a), hex(&b, sizeof b));
  EXPECT_FALSE(quantize_row(TC_DTYPE_Q6_K, x.data(), &b, 256));
  EXPECT_FALSE(dequantize_row(TC_DTYPE_F32, &a, nullptr, 256));
  ASSERT_NE(format_info(TC_DTYPE_Q4_K), nullptr);
  EXPECT_EQ(format_info(TC_DTYPE_Q4_K)->ggml_type, 12u);
  EXPECT_EQ(row_bytes(*format_info(TC_DTYPE_Q4_0), 96), 54u);
  EXPECT_EQ(row_bytes(*format_info(TC_DTYPE_Q4_0), 100), 0u);
  EXPECT_EQ(format_info(TC_DTYPE_F32), nullptr);
}

}  // namespace
}  // namespace tc::quant
