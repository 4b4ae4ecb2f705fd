// IEEE binary16 <-> binary32, bit-exact with ggml (round to nearest even, overflow to inf,
// NaN kept quiet). Portable integer code so that the reference quantizers produce the same
// bytes with or without F16C; tests compare it with _cvtss_sh over many inputs.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace tc::quant {

// The one implementation lives in core/dtype.h (exhaustively tested in tests/core/test_dtype.cpp).
inline float fp16_to_f32(uint16_t h) {
  return f16_to_f32(h);
}
inline uint16_t f32_to_fp16(float f) {
  return f32_to_f16(f);
}

}  // namespace tc::quant
