// The portable fp16 conversion against the hardware's (F16C, round to nearest even).
#include <cpuid.h>
#include <gtest/gtest.h>
#include <immintrin.h>

#include <cmath>
#include <random>

#include "quant/fp16.h"

namespace tc::quant {
namespace {

// CPUID leaf 1, ECX bit 29 (clang 14 has no __builtin_cpu_supports("f16c")).
bool has_f16c() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
}

__attribute__((target("f16c"))) uint16_t hw_to_fp16(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float hw_to_f32(uint16_t h) {
  return _cvtsh_ss(h);
}

TEST(Fp16, AllHalvesRoundTrip) {
  if (!has_f16c()) GTEST_SKIP() << "this CPU has no F16C to compare with";
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_f32(static_cast<uint16_t>(h));
    const float g = hw_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(g)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      continue;
    }
    ASSERT_EQ(f32_to_bits(f), f32_to_bits(g)) << "half 0x" << std::hex << h;
    ASSERT_EQ(f32_to_fp16(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(Fp16, RandomFloatsAndTiesMatchF16C) {
  if (!has_f16c()) GTEST_SKIP() << "this CPU has no F16C to compare with";
  std::mt19937 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t bits = rng();
    if (i % 4 == 1) bits = (bits & 0x8000e000u) | (static_cast<uint32_t>(rng() % 40 + 100) << 23);
    if (i % 4 == 2) bits = (bits & ~0x1fffu) | 0x1000u;  // exact ties of the normal range
    const float f = bits_to_f32(bits);
    const uint16_t want = hw_to_fp16(f);
    if (std::isnan(f)) {
      ASSERT_EQ(f32_to_fp16(f) & 0x7e00u, 0x7e00u);
      continue;
    }
    ASSERT_EQ(f32_to_fp16(f), want) << "float bits 0x" << std::hex << bits;
  }
}

}  // namespace
}  // namespace tc::quant
