// The per-format units of the 8-bit-activation GEMV driver (gemv_quant_q8.cpp), AVX2. A unit
// reads one group of 256 weights straight from the GGUF bytes (8 Q4_0 or Q8_0 blocks, one Q4_K
// super-block) into registers once (load) and dots it with the matching 256 activation codes
// of each row (dot), adding sum_k w_k * x_k to two vectors of 8 partial sums (a unit may use
// the second for an independent term, so that no single FMA chain limits the loop).
//
// Costs that decide the shape (Zen 3, core cycles per instruction, measured): maddubs/madd
// 0.5, unpack 0.5, perm2x128 1, hadd 2 (so no hadd), and/add 0.25. The integer products of a
// block are reduced to one int32 per block with a per-lane unpack tree (tree4) and one float
// conversion, scale multiply and FMA serve 8 blocks. The fp16 scales of 8 blocks are gathered
// on the integer side (16-bit loads, shifts, ors; Q8_0) or by loads and blends (Q4_0, whose
// layout allows it) and converted with one vcvtph2ps. In a loop that streams from memory the
// instruction count per byte matters beyond the pipes: fewer instructions keep more loads in
// the out-of-order window (docs/quant.md, "Fifth session"). Vector loads issue 2 per cycle, 1
// when a load straddles a 64-byte line.
#pragma once

#include <cstddef>
#include <cstring>

#include "cpu/quant_act.h"
#include "cpu/quant_simd.h"
#include "quant/blocks.h"

namespace tc::cpu::q8units {

// Four vectors of 8 int32 -> per 128-bit lane, [sum of s0's 4 lanes, s1's, s2's, s3's].
TC_AVX2 inline __m256i tree4(__m256i s0, __m256i s1, __m256i s2, __m256i s3) {
  const __m256i t01 =
      _mm256_add_epi32(_mm256_unpacklo_epi32(s0, s1), _mm256_unpackhi_epi32(s0, s1));
  const __m256i t23 =
      _mm256_add_epi32(_mm256_unpacklo_epi32(s2, s3), _mm256_unpackhi_epi32(s2, s3));
  return _mm256_add_epi32(_mm256_unpacklo_epi64(t01, t23), _mm256_unpackhi_epi64(t01, t23));
}

// Eight vectors of 8 int32 -> their 8 totals in order.
TC_AVX2 inline __m256i reduce8(const __m256i s[8]) {
  const __m256i a = tree4(s[0], s[1], s[2], s[3]), b = tree4(s[4], s[5], s[6], s[7]);
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                          _mm256_permute2x128_si256(a, b, 0x31));
}

inline uint64_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// The fp16 values at p, p + stride, ..., p + 7 * stride as 8 floats.
TC_AVX2 inline __m256 fp16x8(const uint8_t* p, int stride) {
  const uint64_t lo = load_u16(p) | load_u16(p + stride) << 16 | load_u16(p + 2 * stride) << 32 |
                      load_u16(p + 3 * stride) << 48;
  const uint64_t hi = load_u16(p + 4 * stride) | load_u16(p + 5 * stride) << 16 |
                      load_u16(p + 6 * stride) << 32 | load_u16(p + 7 * stride) << 48;
  return _mm256_cvtph_ps(
      _mm_insert_epi64(_mm_cvtsi64_si128(static_cast<int64_t>(lo)), static_cast<int64_t>(hi), 1));
}

TC_AVX2 inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// Q4_0: blocks i and i+4 share a register (one 128-bit lane each), so the low nibbles of both
// (elements 0..15) and the high nibbles (16..31) are one AND and one shift+AND; the codes are
// stored in that order (ActLayout::q4_0_pairs). The maddubs products (|lane| <= 2 * 15 * 127)
// of four register-halves are added in int16 (<= 15240 < 2^15) before one madd, so a group
// needs 2 madds for 8 blocks. The -8 offset is 8 * (sum of the block's codes), subtracted from
// the int32 block sums. (Two weight rows per pass sharing the activation loads measured no
// faster: the loop is not bound by its loads; by count, the shuffle pipes are the busiest.)
struct Q4_0 {
  static constexpr ActLayout kLayout = ActLayout::q4_0_pairs;
  static constexpr int kBlockBytes = sizeof(quant::BlockQ4_0);
  static constexpr int kGroupBlocks = 8;
  // Software prefetch of the streaming driver: 2 per 144-byte group (72 apart, so each line
  // is touched about once) 2.5 KB ahead. One per started line (3 per group, lines hit twice)
  // 2 KB ahead streamed at 80-87% of a plain read of the same bytes on one core, these at
  // 88-95%; 1 per group 66-69%; 1.5 / 2 / 3 KB ahead 86-87 / 87-91 / 92-94% (Q4_0 4096 x 4096,
  // 2026-11-29 22:21-22:26 UTC).
  static constexpr int kPrefetches = 2;
  static constexpr int kPrefetchAhead = 2560;
  struct W {
    __m256i q[8];  // pair i: q[2i] elements 0..15, q[2i+1] elements 16..31 (lanes: i, i+4)
    __m256 d;
  };
  TC_AVX2 static void load(const uint8_t* p, W& w) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (int i = 0; i < 4; ++i) {
      // Block i's 16 code bytes into lane 0, block i+4's into lane 1: a dword blend with the
      // 32 bytes that end at block i+4's codes (any of the 4 vector pipes) rather than
      // vinserti128 (one pipe, 1 cycle each on Zen 3).
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + kBlockBytes * i + 2));
      const __m256i v = _mm256_blend_epi32(_mm256_castsi128_si256(a),
                                           load256(p + kBlockBytes * (i + 4) + 2 - 16), 0xf0);
      w.q[2 * i] = _mm256_and_si256(v, m4);
      w.q[2 * i + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    }
    w.d = scales(p);
  }
  // The 8 fp16 scales as floats in 6 instructions rather than fp16x8's 23 (the loop is bound by
  // the instructions it dispatches). Block j's scale, at byte 18j = 16j + 2j, is word j of the
  // group's 16-byte chunk j; the 32-byte load at 32k has scales 2k and 2k+1 in dword k of its
  // two lanes, so three dword blends gather them all, and one word blend of the two lanes puts
  // word j = scale j. Every load stays inside the group's 144 bytes.
  TC_AVX2 static __m256 scales(const uint8_t* p) {
    __m256i r = _mm256_blend_epi32(load256(p), load256(p + 32), 0x22);
    r = _mm256_blend_epi32(r, load256(p + 64), 0x44);
    r = _mm256_blend_epi32(r, load256(p + 96), 0x88);
    return _mm256_cvtph_ps(
        _mm_blend_epi16(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1), 0xaa));
  }
  TC_AVX2 static void dot(const W& w, const ActGroup& x, __m256 (&acc)[2]) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i p[4];  // pair i: per lane 8 int16 partials of block i (lane 0) or i + 4 (lane 1)
    for (int i = 0; i < 4; ++i) {
      p[i] = _mm256_add_epi16(_mm256_maddubs_epi16(w.q[2 * i], load256(x.y + 64 * i)),
                              _mm256_maddubs_epi16(w.q[2 * i + 1], load256(x.y + 64 * i + 32)));
    }
    // Pairs 0,1 and 2,3 interleaved 32 bits at a time and added in int16: per lane
    // [b0, b1, b0, b1] and [b2, b3, b2, b3]; those interleaved 64 bits at a time and added:
    // [b0, b1, b2, b3], each int16 a sum of 16 products (|.| <= 16 * 15 * 127 = 30480 < 2^15),
    // so one madd per group gives the block sums.
    const __m256i t01 =
        _mm256_add_epi16(_mm256_unpacklo_epi32(p[0], p[1]), _mm256_unpackhi_epi32(p[0], p[1]));
    const __m256i t23 =
        _mm256_add_epi16(_mm256_unpacklo_epi32(p[2], p[3]), _mm256_unpackhi_epi32(p[2], p[3]));
    const __m256i s = _mm256_madd_epi16(
        _mm256_add_epi16(_mm256_unpacklo_epi64(t01, t23), _mm256_unpackhi_epi64(t01, t23)), ones);
    // Lane 0 holds blocks 0..3, lane 1 blocks 4..7: element order.
    const __m256i t = _mm256_sub_epi32(s, load256(x.sum8));
    acc[0] =
        _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), _mm256_mul_ps(w.d, _mm256_loadu_ps(x.d)), acc[0]);
  }
};

// Q8_0: signed weights times signed codes through maddubs' unsigned operand: |w| times the
// code with w's sign (weights are in [-127, 127] from ggml's quantizer; -128 still fits).
struct Q8_0 {
  static constexpr ActLayout kLayout = ActLayout::natural;
  static constexpr int kBlockBytes = sizeof(quant::BlockQ8_0);
  static constexpr int kGroupBlocks = 8;
  // 5 per 272-byte group 2 KB ahead: 85-94% of a plain read on one core, against 82-85% with
  // Q4_0's pattern (4 per group, 2.5 KB; 22:36 UTC).
  static constexpr int kPrefetches = 5;
  static constexpr int kPrefetchAhead = 2048;
  struct W {
    __m256i q[8], aq[8];  // codes and their absolute values
    __m256 d;
  };
  TC_AVX2 static void load(const uint8_t* p, W& w) {
    for (int b = 0; b < 8; ++b) {
      w.q[b] = load256(p + kBlockBytes * b + 2);
      w.aq[b] = _mm256_sign_epi8(w.q[b], w.q[b]);
    }
    w.d = fp16x8(p, kBlockBytes);
  }
  TC_AVX2 static void dot(const W& w, const ActGroup& x, __m256 (&acc)[2]) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s[8];
    for (int b = 0; b < 8; ++b) {
      const __m256i yv = _mm256_sign_epi8(load256(x.y + 32 * b), w.q[b]);
      s[b] = _mm256_madd_epi16(_mm256_maddubs_epi16(w.aq[b], yv), ones);
    }
    acc[0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(reduce8(s)),
                             _mm256_mul_ps(w.d, _mm256_loadu_ps(x.d)), acc[0]);
  }
};

// Q4_K: one super-block; chunk c's low nibbles are sub-block 2c, its high nibbles 2c+1, each
// in element order. Sub-block j contributes d*sc_j*dy_j*S_j - dmin*m_j*(dy_j*Y_j), S_j the
// integer dot and dy_j*Y_j the activation block's value sum (ActGroup::dsum): one FMA each
// per 8 sub-blocks. The maddubs products of sub-blocks 2c and 2c+1 (|lane| <= 2*15*127) are
// interleaved 32 bits at a time and added in int16 before one madd, which halves the madds
// and the first level of the reduction tree.
struct Q4_K {
  static constexpr ActLayout kLayout = ActLayout::natural;
  static constexpr int kBlockBytes = sizeof(quant::BlockQ4_K);
  static constexpr int kGroupBlocks = 1;
  // As Q4_0 (same group size); 3 per group 2 KB ahead measured the same (22:37 UTC).
  static constexpr int kPrefetches = 2;
  static constexpr int kPrefetchAhead = 2560;
  struct W {
    __m256i q[8];  // sub-block j's 32 codes
    __m256 dsc;    // d * sc_j
    __m256 dmn;    // dmin * m_j
  };
  // The 8 scales and 8 mins as bytes 0..7 and 8..15 (ggml's get_scale_min_k4 on 32-bit words).
  TC_AVX2 static __m128i scales_mins(const uint8_t* packed) {
    uint64_t u01;
    uint32_t u2;
    std::memcpy(&u01, packed, 8);
    std::memcpy(&u2, packed + 8, 4);
    const auto u0 = static_cast<uint32_t>(u01), u1 = static_cast<uint32_t>(u01 >> 32);
    constexpr uint32_t k1 = 0x3f3f3f3f, k2 = 0x0f0f0f0f, k3 = 0x03030303;
    const uint32_t sc_lo = u0 & k1, sc_hi = (u2 & k2) | (((u0 >> 6) & k3) << 4);
    const uint32_t mn_lo = u1 & k1, mn_hi = ((u2 >> 4) & k2) | (((u1 >> 6) & k3) << 4);
    const uint64_t sc = sc_lo | uint64_t{sc_hi} << 32, mn = mn_lo | uint64_t{mn_hi} << 32;
    return _mm_insert_epi64(_mm_cvtsi64_si128(static_cast<int64_t>(sc)), static_cast<int64_t>(mn),
                            1);
  }
  TC_AVX2 static void load(const uint8_t* p, W& w) {
    // Byte offsets, not member access: a block may lie at any byte address (the units read the
    // GGUF bytes where they are), where a BlockQ4_K* would be misaligned (UB; UBSan says so).
    const uint8_t* qs = p + offsetof(quant::BlockQ4_K, qs);
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (int c = 0; c < 4; ++c) {
      const __m256i v = load256(qs + 32 * c);
      w.q[2 * c] = _mm256_and_si256(v, m4);
      w.q[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    }
    uint32_t d_dmin;
    std::memcpy(&d_dmin, p, 4);
    const __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(d_dmin)));  // d, dmin
    const __m128i sm = scales_mins(p + offsetof(quant::BlockQ4_K, scales));
    w.dsc = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sm)), _mm256_broadcastss_ps(dd));
    w.dmn = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8))),
                          _mm256_broadcastss_ps(_mm_movehdup_ps(dd)));
  }
  TC_AVX2 static void dot(const W& w, const ActGroup& x, __m256 (&acc)[2]) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i q[4];  // chunk c, per lane: [S_2c, S_2c+1, S_2c, S_2c+1] partials
    for (int c = 0; c < 4; ++c) {
      const __m256i lo = _mm256_maddubs_epi16(w.q[2 * c], load256(x.y + 64 * c));
      const __m256i hi = _mm256_maddubs_epi16(w.q[2 * c + 1], load256(x.y + 64 * c + 32));
      q[c] = _mm256_madd_epi16(
          _mm256_add_epi16(_mm256_unpacklo_epi32(lo, hi), _mm256_unpackhi_epi32(lo, hi)), ones);
    }
    // Per lane [S_0..S_3] and [S_4..S_7] partials, then the two lanes added: element order.
    const __m256i a =
        _mm256_add_epi32(_mm256_unpacklo_epi64(q[0], q[1]), _mm256_unpackhi_epi64(q[0], q[1]));
    const __m256i b =
        _mm256_add_epi32(_mm256_unpacklo_epi64(q[2], q[3]), _mm256_unpackhi_epi64(q[2], q[3]));
    const __m256i s = _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                                       _mm256_permute2x128_si256(a, b, 0x31));
    acc[0] =
        _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(w.dsc, _mm256_loadu_ps(x.d)), acc[0]);
    // The mins on their own accumulator: one chain of two FMAs per super-block measured 20%
    // slower.
    acc[1] = _mm256_fnmadd_ps(w.dmn, _mm256_loadu_ps(x.dsum), acc[1]);
  }
};

}  // namespace tc::cpu::q8units
