// tc_quantize / tc_dequantize / tc_quant_row_bytes: host-memory entry points over the
// reference row functions. Validation first; nothing is written on failure.
#include "core/error.h"
#include "quant/quant.h"

using tc::fail;
namespace q = tc::quant;

namespace {

tc_status_t check_shape(const q::FormatInfo& f, int64_t rows, int64_t k, size_t bytes,
                        const char* bytes_name) {
  if (rows < 0) return fail(TC_ERROR_INVALID_SHAPE, "rows = {} is negative", rows);
  if (k <= 0 || k % f.block_elems != 0) {
    return fail(TC_ERROR_INVALID_SHAPE, "k = {} is not a positive multiple of the {} block size {}",
                k, f.name, f.block_elems);
  }
  const size_t row = q::row_bytes(f, k);
  size_t need;
  if (__builtin_mul_overflow(row, static_cast<size_t>(rows), &need) || bytes < need) {
    return fail(TC_ERROR_BUFFER_TOO_SMALL,
                "{} = {} is smaller than the {} bytes of {} {} rows of {}", bytes_name, bytes, need,
                rows, f.name, k);
  }
  return TC_SUCCESS;
}

}  // namespace

extern "C" {

size_t tc_quant_row_bytes(tc_dtype_t format, int64_t k) {
  const q::FormatInfo* f = q::format_info(format);
  return f ? q::row_bytes(*f, k) : 0;
}

tc_status_t tc_quantize(tc_dtype_t format, const float* x, int64_t rows, int64_t k, void* y,
                        size_t y_bytes) {
  const q::FormatInfo* f = q::format_info(format);
  if (f == nullptr || format == TC_DTYPE_Q6_K) {
    return fail(TC_ERROR_UNSUPPORTED_DTYPE, "format {} has no quantizer (Q4_0, Q8_0, Q4_K do)",
                static_cast<int>(format));
  }
  if (x == nullptr || y == nullptr) {
    return fail(TC_ERROR_NULL_POINTER, "{} is NULL", x == nullptr ? "x" : "y");
  }
  TC_TRY(check_shape(*f, rows, k, y_bytes, "y_bytes"));
  const size_t row = q::row_bytes(*f, k);
  for (int64_t r = 0; r < rows; ++r) {
    q::quantize_row(format, x + r * k, static_cast<uint8_t*>(y) + r * row, k);
  }
  return TC_SUCCESS;
}

tc_status_t tc_dequantize(tc_dtype_t format, const void* x, size_t x_bytes, int64_t rows, int64_t k,
                          float* y) {
  const q::FormatInfo* f = q::format_info(format);
  if (f == nullptr) {
    return fail(TC_ERROR_UNSUPPORTED_DTYPE, "format {} is not a block-quantized dtype",
                static_cast<int>(format));
  }
  if (x == nullptr || y == nullptr) {
    return fail(TC_ERROR_NULL_POINTER, "{} is NULL", x == nullptr ? "x" : "y");
  }
  TC_TRY(check_shape(*f, rows, k, x_bytes, "x_bytes"));
  const size_t row = q::row_bytes(*f, k);
  for (int64_t r = 0; r < rows; ++r) {
    q::dequantize_row(format, static_cast<const uint8_t*>(x) + r * row, y + r * k, k);
  }
  return TC_SUCCESS;
}

}  // extern "C"
