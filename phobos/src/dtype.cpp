#include "phobos/dtype.h"

#include <cmath>
#include <cstring>

namespace phobos {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::I32:
      return "i32";
    case DType::I8:
      return "i8";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view n) {
  if (n == "f32") return DType::F32;
  if (n == "f16") return DType::F16;
  if (n == "bf16") return DType::BF16;
  if (n == "i32") return DType::I32;
  if (n == "i8") return DType::I8;
  if (n == "bool") return DType::Bool;
  return std::nullopt;
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F16:
    case DType::BF16:
      return 2;
    case DType::I8:
    case DType::Bool:
      return 1;
  }
  return 0;
}

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;  // subnormal: shift the implicit bit in, round to nearest even
    int shift = 14 - e;
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exp: correct
  return static_cast<uint16_t>(half);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t x;
  if (exp == 0x1f) {
    x = sign | 0x7f800000u | (man << 13);
  } else if (exp == 0) {
    if (man == 0) {
      x = sign;
    } else {
      float v = std::ldexp(static_cast<float>(man), -24);
      return sign ? -v : v;
    }
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float bf16_to_f32(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

double round_to(DType t, double v) {
  switch (t) {
    case DType::F32:
      return static_cast<float>(v);
    case DType::F16:
      return f16_to_f32(f32_to_f16(static_cast<float>(v)));
    case DType::BF16:
      return bf16_to_f32(f32_to_bf16(static_cast<float>(v)));
    case DType::I32: {
      if (!std::isfinite(v)) return 0;
      double tr = std::trunc(v);
      if (tr >= 2147483648.0 || tr < -2147483648.0) return 0;  // out of range: defined as 0
      return tr;
    }
    case DType::I8: {
      if (!std::isfinite(v)) return 0;
      long long i = static_cast<long long>(std::fmod(std::trunc(v), 256.0));
      return static_cast<int8_t>(static_cast<uint8_t>(i & 0xff));
    }
    case DType::Bool:
      return v != 0 ? 1 : 0;
  }
  return v;
}

double load_elem(DType t, const void* base, int64_t i) {
  switch (t) {
    case DType::F32:
      return static_cast<const float*>(base)[i];
    case DType::F16:
      return f16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case DType::BF16:
      return bf16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case DType::I32:
      return static_cast<const int32_t*>(base)[i];
    case DType::I8:
      return static_cast<const int8_t*>(base)[i];
    case DType::Bool:
      return static_cast<const uint8_t*>(base)[i] ? 1 : 0;
  }
  return 0;
}

void store_elem(DType t, void* base, int64_t i, double v) {
  switch (t) {
    case DType::F32:
      static_cast<float*>(base)[i] = static_cast<float>(v);
      break;
    case DType::F16:
      static_cast<uint16_t*>(base)[i] = f32_to_f16(static_cast<float>(v));
      break;
    case DType::BF16:
      static_cast<uint16_t*>(base)[i] = f32_to_bf16(static_cast<float>(v));
      break;
    case DType::I32:
      static_cast<int32_t*>(base)[i] = static_cast<int32_t>(round_to(t, v));
      break;
    case DType::I8:
      static_cast<int8_t*>(base)[i] = static_cast<int8_t>(round_to(t, v));
      break;
    case DType::Bool:
      static_cast<uint8_t*>(base)[i] = v != 0;
      break;
  }
}

}  // namespace phobos
