// The table of block formats and the format-generic row entry points.
#include "quant/quant.h"

namespace tc::quant {
namespace {
// GGUF type ids and geometry from spec §1.2.
constexpr FormatInfo kFormats[] = {
    {TC_DTYPE_Q4_0, 2, kQK, sizeof(BlockQ4_0), "q4_0"},
    {TC_DTYPE_Q8_0, 8, kQK, sizeof(BlockQ8_0), "q8_0"},
    {TC_DTYPE_Q4_K, 12, kQK_K, sizeof(BlockQ4_K), "q4_k"},
    {TC_DTYPE_Q6_K, 14, kQK_K, sizeof(BlockQ6_K), "q6_k"},
};
}  // namespace

const FormatInfo* format_info(tc_dtype_t dtype) {
  for (const FormatInfo& f : kFormats) {
    if (f.dtype == dtype) return &f;
  }
  return nullptr;
}

bool quantize_row(tc_dtype_t format, const float* x, void* y, int64_t k) {
  switch (format) {
    case TC_DTYPE_Q4_0:
      quantize_row_q4_0(x, static_cast<BlockQ4_0*>(y), k);
      return true;
    case TC_DTYPE_Q8_0:
      quantize_row_q8_0(x, static_cast<BlockQ8_0*>(y), k);
      return true;
    case TC_DTYPE_Q4_K:
      quantize_row_q4_K(x, static_cast<BlockQ4_K*>(y), k);
      return true;
    default:
      return false;
  }
}

bool dequantize_row(tc_dtype_t format, const void* x, float* y, int64_t k) {
  switch (format) {
    case TC_DTYPE_Q4_0:
      dequantize_row_q4_0(static_cast<const BlockQ4_0*>(x), y, k);
      return true;
    case TC_DTYPE_Q8_0:
      dequantize_row_q8_0(static_cast<const BlockQ8_0*>(x), y, k);
      return true;
    case TC_DTYPE_Q4_K:
      dequantize_row_q4_K(static_cast<const BlockQ4_K*>(x), y, k);
      return true;
    case TC_DTYPE_Q6_K:
      dequantize_row_q6_K(static_cast<const BlockQ6_K*>(x), y, k);
      return true;
    default:
      return false;
  }
}

}  // namespace tc::quant
