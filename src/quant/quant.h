// Reference quantizers and dequantizers of the GGUF block formats. Rows run along the
// contiguous dimension; `k` must be a multiple of the block size (callers validate).
//
// The quantizers follow ggml's `quantize_row_*_ref` exactly (no imatrix) and are compiled with
// -ffp-contract=off, the "non-FMA" convention of the spec (§0), so their bytes equal ggml's
// generic x86-64 build. The dequantizers evaluate in the spec's order, bit-exact with ggml.
#pragma once

#include <cstdint>

#include "quant/blocks.h"

namespace tc::quant {

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t k);
void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t k);
void quantize_row_q4_K(const float* x, BlockQ4_K* y, int64_t k);
// Activation format of the K-quant dots; unlike ggml's reference, bsums of an all-zero block
// are written as zeros too.
void quantize_row_q8_K(const float* x, BlockQ8_K* y, int64_t k);

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t k);
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t k);
void dequantize_row_q4_K(const BlockQ4_K* x, float* y, int64_t k);
void dequantize_row_q6_K(const BlockQ6_K* x, float* y, int64_t k);

// Unpacks sub-block j's 6-bit scale and min from a Q4_K `scales[12]` (get_scale_min_k4).
inline void q4_K_scale_min(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Format-generic forms over raw bytes; return false for a format without that direction
// (Q6_K has no quantizer here).
bool quantize_row(tc_dtype_t format, const float* x, void* y, int64_t k);
bool dequantize_row(tc_dtype_t format, const void* x, float* y, int64_t k);

}  // namespace tc::quant
