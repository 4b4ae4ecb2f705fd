// Element types of Phobos (spec §2) and their rounding rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace phobos {

enum class DType : uint8_t { F32, F16, BF16, I32, I8, Bool };

const char* dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
size_t dtype_size(DType t);
inline bool is_float(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
inline bool is_int(DType t) {
  return t == DType::I32 || t == DType::I8;
}

// IEEE binary16 / bfloat16 conversions, round to nearest even (spec §3: f32 -> f16 on store).
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t h);

// The value `v` after storing it in type `t` (float rounding, integer truncation and wrap).
double round_to(DType t, double v);

// Reads/writes one element of a buffer of type `t` as a double.
double load_elem(DType t, const void* base, int64_t index);
void store_elem(DType t, void* base, int64_t index, double v);

}  // namespace phobos
