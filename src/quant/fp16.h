// IEEE binary16 <-> binary32, bit-exact with ggml (round to nearest even, overflow to inf,
// NaN kept quiet). Portable integer code so that the reference quantizers produce the same
// bytes with or without F16C; tests compare it with _cvtss_sh over many inputs.
#pragma once

#include <cstdint>
#include <cstring>

namespace tc::quant {

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  if (exp != 0) return f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return f32_from_bits(sign);
  // Subnormal half: mant * 2^-24, exact in binary32.
  const float v = static_cast<float>(mant) * f32_from_bits(0x33800000u);  // 2^-24
  return sign ? -v : v;
}

inline uint16_t f32_to_fp16(float f) {
  uint32_t x = f32_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return sign | 0x7e00u;   // NaN -> quiet NaN
  if (x >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to inf
  if (x >= 0x38800000u) {                       // normal half (>= 2^-14)
    // Rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits to even.
    const uint32_t r = x - 0x38000000u + 0xfffu + ((x >> 13) & 1u);
    return sign | static_cast<uint16_t>(r >> 13);
  }
  if (x < 0x33000000u) return sign;  // below 2^-25 (and exactly 2^-25 ties to 0)
  // Subnormal half: value = m * 2^(e-150); in units of 2^-24 that is m >> (126 - e).
  const uint32_t e = x >> 23;
  const uint32_t m = (x & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;  // 14..24
  const uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  const uint32_t up = (rem > half || (rem == half && (q & 1u))) ? 1u : 0u;
  return sign | static_cast<uint16_t>(q + up);
}

}  // namespace tc::quant
