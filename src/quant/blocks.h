// GGUF block layouts (shared/specs/quant-formats.md §1). Blocks are packed with no padding; the
// only alignment is that of the widest member, so arrays of Q4_0/Q8_0/Q6_K blocks are only
// 2-byte aligned and Q4_K 2-byte aligned as well (its fp16 pair comes first). The
// static_asserts pin the byte offsets that files and kernels rely on.
#pragma once

#include <tc/tc.h>

#include <cstddef>
#include <cstdint>

namespace tc::quant {

inline constexpr int kQK = 32;     // elements per Q4_0 / Q8_0 block
inline constexpr int kQK_K = 256;  // elements per K-quant super-block

struct BlockQ4_0 {
  uint16_t d;           // fp16 scale, may be negative
  uint8_t qs[kQK / 2];  // element j: low nibble of qs[j]; element j+16: high nibble
};
static_assert(sizeof(BlockQ4_0) == 18 && alignof(BlockQ4_0) == 2);
static_assert(offsetof(BlockQ4_0, qs) == 2);

struct BlockQ8_0 {
  uint16_t d;      // fp16 scale >= 0
  int8_t qs[kQK];  // element order = index order
};
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 2);
static_assert(offsetof(BlockQ8_0, qs) == 2);

struct BlockQ4_K {
  uint16_t d;             // fp16 super-scale of the 6-bit sub-block scales
  uint16_t dmin;          // fp16 super-scale of the 6-bit sub-block mins
  uint8_t scales[12];     // eight 6-bit scales and eight 6-bit mins, packed (§1.7)
  uint8_t qs[kQK_K / 2];  // four 32-byte chunks: low nibbles elements 64c+l, high 64c+32+l
};
static_assert(sizeof(BlockQ4_K) == 144 && alignof(BlockQ4_K) == 2);
static_assert(offsetof(BlockQ4_K, dmin) == 2 && offsetof(BlockQ4_K, scales) == 4);
static_assert(offsetof(BlockQ4_K, qs) == 16);

struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];      // low 4 bits
  uint8_t qh[kQK_K / 4];      // high 2 bits
  int8_t scales[kQK_K / 16];  // int8 scale per 16 elements
  uint16_t d;                 // fp16 super-scale, may be negative
};
static_assert(sizeof(BlockQ6_K) == 210 && alignof(BlockQ6_K) == 2);
static_assert(offsetof(BlockQ6_K, qh) == 128 && offsetof(BlockQ6_K, scales) == 192);
static_assert(offsetof(BlockQ6_K, d) == 208);

// Activation format of the K-quant dot products (never stored in files).
struct BlockQ8_K {
  float d;  // fp32 scale, may be negative
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];  // sums of each 16 consecutive qs
};
static_assert(sizeof(BlockQ8_K) == 292 && alignof(BlockQ8_K) == 4);
static_assert(offsetof(BlockQ8_K, qs) == 4 && offsetof(BlockQ8_K, bsums) == 260);

// What the code needs to know about a weight format: its block geometry and its GGUF type id.
struct FormatInfo {
  tc_dtype_t dtype;
  uint32_t ggml_type;
  int32_t block_elems;
  int32_t block_bytes;
  const char* name;  // lower case, as `tc quant --to` spells it
};

// nullptr for dtypes that are not block-quantized.
const FormatInfo* format_info(tc_dtype_t dtype);

// Bytes of one row of `k` elements; 0 when k is not a multiple of the block size.
inline size_t row_bytes(const FormatInfo& f, int64_t k) {
  if (k < 0 || k % f.block_elems != 0) return 0;
  return static_cast<size_t>(k / f.block_elems) * static_cast<size_t>(f.block_bytes);
}

}  // namespace tc::quant
