// Bulk conversion between f32 and f16/bf16 on the CPU: F16C / AVX2 where present (chosen at run
// time), scalar otherwise. Rounding is to nearest even, NaN stays NaN.
#pragma once

#include <tc/tc.h>

#include <cstddef>
#include <cstdint>

namespace tc::cpu {

// dst[i] = float(src[i]) for `n` elements of dtype `t` (F16, BF16 or F32).
void to_f32(tc_dtype_t t, const void* src, float* dst, size_t n);
// dst[i] = t(src[i]).
void from_f32(tc_dtype_t t, const float* src, void* dst, size_t n);

}  // namespace tc::cpu
