// ggml's reference quantizers (shared/specs/quant-formats.md §1.3, §1.4, §1.6, §1.7), written
// from the spec. Every floating-point expression keeps ggml's evaluation order, and this file
// is compiled with -ffp-contract=off so that no multiply-add is fused: both are needed for the
// bytes to match ggml's (the tests check the spec's vectors).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/fp16.h"
#include "quant/quant.h"

namespace tc::quant {
namespace {

// Round half to even through the 1.5*2^23 trick; valid for |f| <= 4194303 (spec §1.1).
inline int nearest_int(float f) {
  const float v = f + 12582912.0f;
  int32_t i;
  std::memcpy(&i, &v, 4);
  return (i & 0x007fffff) - 0x00400000;
}

// Weighted affine fit x ~ scale*L + offset (offset <= 0) over n values with codes 0..nmax,
// trying nstep+1 candidate inverse scales (§1.7 make_qkx2). Returns scale; *the_min = -offset.
float make_qkx2(int n, int nmax, const float* x, const float* w, uint8_t* L, float* the_min,
                uint8_t* Laux, float rmin, float rdelta, int nstep) {
  float min = x[0], max = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, uint8_t{0});
    *the_min = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
    L[i] = static_cast<uint8_t>(l);
    const float diff = scale * L[i] + min - x[i];
    best_error += w[i] * (diff * diff);
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      sum_l += w[i] * l;
      sum_l2 += w[i] * l * l;
      sum_xl += w[i] * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        const float diff = this_scale * Laux[i] + this_min - x[i];
        cur_error += w[i] * (diff * diff);
      }
      if (cur_error < best_error) {
        std::copy(Laux, Laux + n, L);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

}  // namespace

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t k) {
  for (int64_t b = 0; b < k / kQK; ++b, x += kQK) {
    float amax = 0, max = 0;  // sign-carrying max: first element of largest |x|
    for (int j = 0; j < kQK; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[b].d = f32_to_fp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const float x0 = x[j] * id;  // two roundings: product, then the +8.5 (non-FMA)
      const float x1 = x[j + kQK / 2] * id;
      const int a = std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 8.5f)));
      const int c = std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 8.5f)));
      y[b].qs[j] = static_cast<uint8_t>(a | (c << 4));
    }
  }
}

void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t k) {
  for (int64_t b = 0; b < k / kQK; ++b, x += kQK) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[b].d = f32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) y[b].qs[j] = static_cast<int8_t>(std::roundf(x[j] * id));
  }
}

void quantize_row_q4_K(const float* x, BlockQ4_K* y, int64_t k) {
  uint8_t L[kQK_K], Laux[32];
  float weights[32], mins[8], scales[8];
  for (int64_t b = 0; b < k / kQK_K; ++b, x += kQK_K) {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
      const float* xs = x + 32 * j;
      float sum_x2 = 0;
      for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
      const float av_x = std::sqrt(sum_x2 / 32);
      for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
      scales[j] = make_qkx2(32, 15, xs, weights, L + 32 * j, &mins[j], Laux, -1.f, 0.1f, 20);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    BlockQ4_K& out = y[b];
    std::memset(out.scales, 0, sizeof out.scales);
    for (int j = 0; j < 8; ++j) {
      const uint8_t ls =
          std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
      const uint8_t lm =
          std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
      if (j < 4) {
        out.scales[j] = ls;
        out.scales[j + 4] = lm;
      } else {
        out.scales[j + 4] = static_cast<uint8_t>((ls & 0xf) | ((lm & 0xf) << 4));
        out.scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
        out.scales[j] |= static_cast<uint8_t>((lm >> 4) << 6);
      }
    }
    out.d = f32_to_fp16(max_scale / 63.f);
    out.dmin = f32_to_fp16(max_min / 63.f);
    // Re-quantize against the rounded scales; a zero scale keeps make_qkx2's codes (as ggml).
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      q4_K_scale_min(j, out.scales, &sc, &m);
      const float d = fp16_to_f32(out.d) * sc;
      if (d == 0) continue;
      const float dm = fp16_to_f32(out.dmin) * m;
      for (int i = 0; i < 32; ++i) {
        L[32 * j + i] =
            static_cast<uint8_t>(std::clamp(nearest_int((x[32 * j + i] + dm) / d), 0, 15));
      }
    }
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        out.qs[32 * c + l] = static_cast<uint8_t>(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
      }
    }
  }
}

void quantize_row_q8_K(const float* x, BlockQ8_K* y, int64_t k) {
  for (int64_t b = 0; b < k / kQK_K; ++b, x += kQK_K) {
    float amax = 0, max = 0;
    for (int j = 0; j < kQK_K; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    BlockQ8_K& out = y[b];
    if (amax == 0) {
      std::memset(&out, 0, sizeof out);
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < kQK_K; ++j) {
      out.qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
    }
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += out.qs[16 * g + i];
      out.bsums[g] = static_cast<int16_t>(sum);
    }
    out.d = 1 / iscale;
  }
}

}  // namespace tc::quant
