#include "cpu/cpu_features.h"

#include <tc/tc.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "core/env.h"

namespace tc::cpu {
namespace {

uint32_t detect() {
  uint32_t f = 0;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) f |= TC_CPU_AVX2;
  if (__builtin_cpu_supports("fma")) f |= TC_CPU_FMA;
  // clang 14 has no "f16c" for __builtin_cpu_supports: read CPUID leaf 1, ECX bit 29.
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29))) f |= TC_CPU_F16C;
  if (__builtin_cpu_supports("avx512f")) f |= TC_CPU_AVX512F;
  if (__builtin_cpu_supports("avx512bw")) f |= TC_CPU_AVX512BW;
  if (__builtin_cpu_supports("avx512vnni")) f |= TC_CPU_AVX512VNNI;
  if (__builtin_cpu_supports("avx512bf16")) f |= TC_CPU_AVX512BF16;
#endif
  auto cap = env::get("TC_CPU_ISA");
  if (cap) {
    if (*cap == "scalar") f = 0;
    if (*cap == "avx2") f &= TC_CPU_AVX2 | TC_CPU_FMA | TC_CPU_F16C;
  }
  return f;
}

}  // namespace

uint32_t features() {
  static const uint32_t f = detect();
  return f;
}

bool has(uint32_t bits) {
  return (features() & bits) == bits;
}

}  // namespace tc::cpu
