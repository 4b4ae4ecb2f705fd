// Batched decode, M <= 32 (quant_kernels.h): mma.sync m16n8k16, f16 in, f32 out.
//
// A CTA owns 32 weight rows (four n8 tiles, so each X fragment a warp loads serves 32 rows:
// X bytes read from L1 per weight byte fall from ~14 to ~3.5) and all M <= 32 activation rows
// (one or two m16 tiles); its 8 warps split the 32-element groups of K and add their partial
// sums at the end. Per group each lane builds its B fragments straight from the block bytes:
// the small integers (Q4_0 q-8, Q8_0 q, Q4_K q) are exact in f16 (0x6400 | q is 1024 + q), so
// the MMA sums exact weights; the block scale (Q4_K: d*sc, and dmin*m times the group's x sum)
// is applied in f32 per group. X is split into hi + lo f16 halves (two MMAs each), so products
// keep ~22 bits and the result meets the f32 bound. Each weight byte is loaded once for the
// whole batch; the next group's bytes are in flight while a group is computed. Fragment maps:
// quant_mma_layout.h. 256 threads, 16-32 KB static shared memory (the cross-warp sums).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/quant_dequant.cuh"
#include "cuda/quant_launch.cuh"
#include "cuda/quant_mma_layout.h"

namespace tc::cuda::quant {
namespace {

constexpr int kWarps = 8;  // split K: N = 4096 still has 128 CTAs x 8 warps
constexpr int kNT = 4;     // n8 tiles per warp: each X fragment serves 32 weight rows

__device__ __forceinline__ void mma16816(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t h2_bits(__half2 h) {
  return *reinterpret_cast<uint32_t*>(&h);
}

// Two integers in 0..1023 at bits 0..9 and 16..25 -> half2(v0 - bias, v1 - bias), exact.
__device__ __forceinline__ uint32_t ints_to_h2(uint32_t packed, float bias) {
  const uint32_t magic = packed | 0x64006400u;
  const __half2 r =
      __hsub2(*reinterpret_cast<const __half2*>(&magic), __float2half2_rn(1024.0f + bias));
  return h2_bits(r);
}

__device__ __forceinline__ uint32_t nib_pair(uint32_t v, int shift) {  // nibbles of 2 bytes
  v >>= shift;
  return (v & 0xFu) | ((v & 0xF00u) << 8);
}

__device__ __forceinline__ void split_x(float2 v, uint32_t* hi, uint32_t* lo) {
  const __half2 h = __float22half2_rn(v);
  const float2 hf = __half22float2(h);
  *hi = h2_bits(h);
  *lo = h2_bits(__float22half2_rn(make_float2(v.x - hf.x, v.y - hf.y)));
}

// One lane's bytes of one 32-element group of its B row, and the fragments built from them.
// The k order inside a group is free as long as A uses the same one: logical k = 2t + e
// (+8 for b1 / a2) of chunk ch is physical element p = 16 ch + 4t + 2h + e (h = 1 for the +8
// half), so a lane's weights are 4 consecutive bytes per chunk (Q4_0: both nibbles of the
// same 4 bytes) and its activations one float4 per row and chunk.
template <int FMT>
struct RawB;

template <>
struct RawB<kQ4_0> {  // element e < 16: low nibble of qs[e]; else high nibble of qs[e - 16]
  uint32_t d, v0, v1;
  __device__ void load(const uint8_t* row, int g, int t) {
    const uint8_t* blk = row + 18 * g;
    d = ld_u16(blk);
    v0 = ld_u16(blk + 2 + mma_layout::q4_0_byte(0, t, 0));  // qs[4t], qs[4t+1]
    v1 = ld_u16(blk + 2 + mma_layout::q4_0_byte(0, t, 1));  // qs[4t+2], qs[4t+3]
  }
  __device__ void build(uint32_t (*b)[2], float* s, float* mn) const {
    *s = h2f(uint16_t(d));
    *mn = 0.0f;
    // Chunk 1 reads the bytes of chunk 0 (q4_0_byte(1, t, h) == q4_0_byte(0, t, h)).
    b[0][0] = ints_to_h2(nib_pair(v0, mma_layout::q4_0_shift(0)), 8.0f);  // elements 4t, 4t+1
    b[0][1] = ints_to_h2(nib_pair(v1, mma_layout::q4_0_shift(0)), 8.0f);  // 4t+2, 4t+3
    b[1][0] = ints_to_h2(nib_pair(v0, mma_layout::q4_0_shift(1)), 8.0f);  // 16+4t, 16+4t+1
    b[1][1] = ints_to_h2(nib_pair(v1, mma_layout::q4_0_shift(1)), 8.0f);
  }
};

template <>
struct RawB<kQ8_0> {
  uint32_t d, v[2][2];
  __device__ void load(const uint8_t* row, int g, int t) {
    const uint8_t* blk = row + 34 * g;
    d = ld_u16(blk);
#pragma unroll
    for (int ch = 0; ch < 2; ++ch)
#pragma unroll
      for (int h = 0; h < 2; ++h) v[ch][h] = ld_u16(blk + 2 + mma_layout::q8_byte(ch, t, h));
  }
  __device__ void build(uint32_t (*b)[2], float* s, float* mn) const {
    *s = h2f(uint16_t(d));
    *mn = 0.0f;
#pragma unroll
    for (int ch = 0; ch < 2; ++ch)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t x = v[ch][h] ^ 0x8080u;  // q + 128 per byte
        b[ch][h] = ints_to_h2((x & 0xFFu) | ((x & 0xFF00u) << 8), 128.0f);
      }
  }
};

template <>
struct RawB<kQ4_K> {  // group g = sub-block j of super-block g / 8
  uint32_t d, dmin, sa, sb, sc, v[2][2];
  int j;
  __device__ void load(const uint8_t* row, int g, int t) {
    const uint8_t* blk = row + 144 * (g / 8);
    j = g % 8;
    d = ld_u16(blk);  // loads only: build() does the arithmetic
    dmin = ld_u16(blk + 2);
    sa = blk[4 + (j & 3)];  // scales[j & 3], [(j & 3) + 4], [(j & 3) + 8]
    sb = blk[8 + (j & 3)];
    sc = blk[12 + (j & 3)];
    const uint8_t* q = blk + 16 + 32 * (j / 2);
#pragma unroll
    for (int ch = 0; ch < 2; ++ch)
#pragma unroll
      for (int h = 0; h < 2; ++h) v[ch][h] = ld_u16(q + mma_layout::q8_byte(ch, t, h));
  }
  __device__ void build(uint32_t (*b)[2], float* s, float* mn) const {
    // get_scale_min_k4: j < 4 reads scales[j], [j+4]; j >= 4 reads [j+4], [j-4], [j].
    const int scl = j < 4 ? int(sa & 63) : int((sc & 0x0f) | ((sa >> 6) << 4));
    const int mnv = j < 4 ? int(sb & 63) : int((sc >> 4) | ((sb >> 6) << 4));
    *s = h2f(uint16_t(d)) * float(scl);
    *mn = h2f(uint16_t(dmin)) * float(mnv);
    const int shift = 4 * (j & 1);
#pragma unroll
    for (int ch = 0; ch < 2; ++ch)
#pragma unroll
      for (int h = 0; h < 2; ++h) b[ch][h] = ints_to_h2(nib_pair(v[ch][h], shift), 0.0f);
  }
};

template <int FMT, int MT>
__global__ void __launch_bounds__(kWarps * 32)
    mma_kernel(const uint8_t* __restrict__ W, const float* __restrict__ X, float* __restrict__ Y,
               int M, int N, int K, size_t row_bytes) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int gq = lane / 4, t = lane % 4;
  const int n0 = blockIdx.x * 8 * kNT;
  const uint8_t* rows[kNT];
#pragma unroll
  for (int nt = 0; nt < kNT; ++nt) rows[nt] = W + size_t(min(n0 + 8 * nt + gq, N - 1)) * row_bytes;
  float acc[MT][kNT][4] = {};
  const int G = K / 32;
  // The next group's bytes are loaded while this group is computed.
  RawB<FMT> cur[kNT], next[kNT];
  if (warp < G) {
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) cur[nt].load(rows[nt], warp, t);
  }
  for (int g = warp; g < G; g += kWarps) {
    if (g + kWarps < G) {
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) next[nt].load(rows[nt], g + kWarps, t);
    }
    // B fragments and per-row scales (this lane's B row is gq of each n tile).
    uint32_t b[kNT][2][2];
    float s[kNT], mn[kNT];
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) cur[nt].build(b[nt], &s[nt], &mn[nt]);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      // A fragments of rows r0 = 16 mt + gq and r0 + 8: logical k 2t, 2t+1 (+8) of chunk ch
      // are physical elements 16 ch + 4t + 0..3 (see RawB), one float4 per row and chunk.
      uint32_t ahi[2][4], alo[2][4];
      float xs0 = 0.0f, xs1 = 0.0f;
#pragma unroll
      for (int ch = 0; ch < 2; ++ch) {
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int r = 16 * mt + gq + 8 * hr;
          float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          if (r < M)
            v = __ldg(reinterpret_cast<const float4*>(X + size_t(r) * K + 32 * g +
                                                      mma_layout::lane_first_element(ch, t)));
          split_x(make_float2(v.x, v.y), &ahi[ch][hr], &alo[ch][hr]);          // a0 / a1
          split_x(make_float2(v.z, v.w), &ahi[ch][2 + hr], &alo[ch][2 + hr]);  // a2 / a3
          if (FMT == kQ4_K) (hr ? xs1 : xs0) += (v.x + v.y) + (v.z + v.w);
        }
      }
      if (FMT == kQ4_K) {  // the group's x sums of rows r0, r0+8: add over the quad
        xs0 += __shfl_xor_sync(0xffffffffu, xs0, 1);
        xs0 += __shfl_xor_sync(0xffffffffu, xs0, 2);
        xs1 += __shfl_xor_sync(0xffffffffu, xs1, 1);
        xs1 += __shfl_xor_sync(0xffffffffu, xs1, 2);
      }
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int ch = 0; ch < 2; ++ch) {
          mma16816(c, ahi[ch], b[nt][ch][0], b[nt][ch][1]);
          mma16816(c, alo[ch], b[nt][ch][0], b[nt][ch][1]);
        }
        // Columns 2t, 2t+1 of the C fragment are B rows 2t, 2t+1: lanes 8t and 8t+4.
        const float s0 = __shfl_sync(0xffffffffu, s[nt], 8 * t);
        const float s1 = __shfl_sync(0xffffffffu, s[nt], 8 * t + 4);
        acc[mt][nt][0] += s0 * c[0];
        acc[mt][nt][1] += s1 * c[1];
        acc[mt][nt][2] += s0 * c[2];
        acc[mt][nt][3] += s1 * c[3];
        if (FMT == kQ4_K) {
          const float m0 = __shfl_sync(0xffffffffu, mn[nt], 8 * t);
          const float m1 = __shfl_sync(0xffffffffu, mn[nt], 8 * t + 4);
          acc[mt][nt][0] -= m0 * xs0;
          acc[mt][nt][1] -= m1 * xs0;
          acc[mt][nt][2] -= m0 * xs1;
          acc[mt][nt][3] -= m1 * xs1;
        }
      }
    }
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) cur[nt] = next[nt];
  }
  __shared__ float red[kWarps][MT * kNT * 4][32];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) red[warp][(mt * kNT + nt) * 4 + i][lane] = acc[mt][nt][i];
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float v = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) v += red[w][(mt * kNT + nt) * 4 + i][lane];
        const int m = 16 * mt + gq + 8 * (i >> 1), n = n0 + 8 * nt + 2 * t + (i & 1);
        if (m < M && n < N) Y[size_t(m) * N + n] = v;
      }
    }
  }
}

template <int FMT>
void launch_fmt(const Args& a, cudaStream_t s) {
  const int grid = (a.N + 8 * kNT - 1) / (8 * kNT);
  const auto* w = static_cast<const uint8_t*>(a.w);
  const auto* x = static_cast<const float*>(a.x);
  if (a.M <= 16) {
    mma_kernel<FMT, 1><<<grid, kWarps * 32, 0, s>>>(w, x, a.y, a.M, a.N, a.K, w_row_bytes(a));
  } else {
    mma_kernel<FMT, 2><<<grid, kWarps * 32, 0, s>>>(w, x, a.y, a.M, a.N, a.K, w_row_bytes(a));
  }
}

}  // namespace

bool mma_supports(const Args& a, std::string& why) {
  if (a.x_dtype != TC_DTYPE_F32) return (why = "x must be f32", false);
  if (a.w_dtype != TC_DTYPE_Q4_0 && a.w_dtype != TC_DTYPE_Q8_0 && a.w_dtype != TC_DTYPE_Q4_K)
    return (why = "formats Q4_0, Q8_0, Q4_K only", false);
  if (a.M > 32) return (why = "M > 32", false);
  if (reinterpret_cast<uintptr_t>(a.w) % 2 != 0 || reinterpret_cast<uintptr_t>(a.x) % 16 != 0)
    return (why = "W not 2-byte or X not 16-byte aligned", false);
  return true;
}

tc_status_t launch_mma(const Args& a, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  with_format(a.w_dtype, [&](auto f) { launch_fmt<decltype(f)::value>(a, s); });
  return launched("quant mma kernel launch");
}

}  // namespace tc::cuda::quant
