// f16 / bf16 conversion against the IEEE definitions, over every 16-bit pattern.
#include <gtest/gtest.h>
#include <tc/tc.h>

#include <cmath>
#include <cstring>

#include "core/dtype.h"

namespace tc::test {
namespace {

TEST(Dtype, F16RoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = f16_to_f32(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << h;
      continue;
    }
    ASSERT_EQ(f32_to_f16(f), uint16_t(h)) << "pattern " << h;
  }
}

TEST(Dtype, F16KnownValuesAndRounding) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // halfway to 2^16 rounds to inf
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);         // halfway, to even (0)
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 ulp -> 2
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(3.0f, -11)), 0x3c02);
  EXPECT_FLOAT_EQ(f16_to_f32(0x3555), 0.333251953125f);
}

TEST(Dtype, Bf16RoundingAndNaN) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f808000)), 0x3f80);  // tie to even
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f818000)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(bf16_to_f32(f32_to_bf16(INFINITY))));
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = bf16_to_f32(uint16_t(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(f32_to_bf16(f), h);
    }
  }
}

TEST(Dtype, NamesAndSizes) {
  EXPECT_STREQ(tc_dtype_name(TC_DTYPE_BF16), "bf16");
  EXPECT_EQ(tc_dtype_size(TC_DTYPE_F16), 2u);
  EXPECT_EQ(tc_dtype_size(TC_DTYPE_I32), 4u);
  EXPECT_EQ(tc_dtype_size(TC_DTYPE_Q4_0), 0u);
  EXPECT_STREQ(tc_dtype_name(static_cast<tc_dtype_t>(99)), "invalid");
}

}  // namespace
}  // namespace tc::test
