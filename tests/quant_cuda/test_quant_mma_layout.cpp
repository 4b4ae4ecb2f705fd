// The integer maps of the quantized MMA kernel (src/cuda/quant_mma_layout.h), on the host:
// the fragments that the kernel's A loads (one float4 of X per row and chunk) and B loads
// (block bytes per format) describe, multiplied as m16n8k16 multiplies them, must give every
// group's exact dot product. Runs without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "cuda/quant_mma_layout.h"

namespace {

namespace ml = tc::cuda::quant::mma_layout;

enum class Fmt { q4_0, q8_0, q4_k_even, q4_k_odd };

// Element p (0..31) of a group as the reference dequantizer defines it (before scaling).
int reference_element(Fmt f, const std::vector<uint8_t>& qs, int p) {
  switch (f) {
    case Fmt::q4_0:
      return (p < 16 ? qs[p] & 15 : qs[p - 16] >> 4) - 8;
    case Fmt::q8_0:
      return int8_t(qs[p]);
    case Fmt::q4_k_even:
      return qs[p] & 15;  // sub-block 2c: low nibbles of the chunk
    default:
      return qs[p] >> 4;  // sub-block 2c+1: high nibbles
  }
}

// The weight the kernel puts in half e of B register h of chunk ch for quad index t.
int kernel_element(Fmt f, const std::vector<uint8_t>& qs, int ch, int t, int h, int e) {
  switch (f) {
    case Fmt::q4_0:
      return ((qs[ml::q4_0_byte(ch, t, h) + e] >> ml::q4_0_shift(ch)) & 15) - 8;
    case Fmt::q8_0:
      return int8_t(qs[ml::q8_byte(ch, t, h) + e]);
    case Fmt::q4_k_even:
      return qs[ml::q8_byte(ch, t, h) + e] & 15;
    default:
      return qs[ml::q8_byte(ch, t, h) + e] >> 4;
  }
}

TEST(QuantMmaLayout, GroupOrderIsAPermutationWithFloat4Runs) {
  std::set<int> seen;
  for (int ch = 0; ch < 2; ++ch) {
    for (int k = 0; k < 16; ++k) seen.insert(ml::group_element(ch, k));
    for (int t = 0; t < 4; ++t) {  // the 4 k of a lane are 4 consecutive elements
      const int p0 = ml::lane_first_element(ch, t);
      EXPECT_EQ(p0 % 4, 0);
      for (int h = 0; h < 2; ++h)
        for (int e = 0; e < 2; ++e)
          EXPECT_EQ(ml::group_element(ch, 2 * t + e + 8 * h), p0 + 2 * h + e);
    }
  }
  EXPECT_EQ(seen.size(), 32u);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 31);
}

TEST(QuantMmaLayout, FragmentsGiveEachGroupsDotProduct) {
  std::mt19937 rng(5);
  for (Fmt f : {Fmt::q4_0, Fmt::q8_0, Fmt::q4_k_even, Fmt::q4_k_odd}) {
    const int qs_bytes = f == Fmt::q4_0 ? 16 : 32;
    std::vector<std::vector<uint8_t>> w(8, std::vector<uint8_t>(qs_bytes));  // 8 weight rows
    for (auto& row : w)
      for (auto& b : row) b = uint8_t(rng());
    std::vector<std::vector<int>> x(16, std::vector<int>(32));  // 16 activation rows
    for (auto& row : x)
      for (auto& v : row) v = int(rng() % 2001) - 1000;
    std::vector<std::vector<long>> c(16, std::vector<long>(8, 0));
    for (int ch = 0; ch < 2; ++ch) {
      int A[16][16], B[16][8];
      int a_set[16][16] = {}, b_set[16][8] = {};
      for (int lane = 0; lane < 32; ++lane) {
        const int t = lane % 4;
        const int p0 = ml::lane_first_element(ch, t);  // the kernel's float4 of X
        for (int i = 0; i < 4; ++i) {
          for (int e = 0; e < 2; ++e) {
            const int r = ml::a_row(lane, i), k = ml::a_col(lane, i, e);
            A[r][k] = x[r][p0 + 2 * (i >> 1) + e];  // .x .y -> a0/a1, .z .w -> a2/a3
            ++a_set[r][k];
          }
        }
        for (int h = 0; h < 2; ++h) {
          for (int e = 0; e < 2; ++e) {
            const int k = ml::b_row(lane, h, e), n = ml::b_col(lane);
            B[k][n] = kernel_element(f, w[n], ch, t, h, e);
            ++b_set[k][n];
          }
        }
      }
      for (int r = 0; r < 16; ++r)
        for (int k = 0; k < 16; ++k) ASSERT_EQ(a_set[r][k], 1) << r << " " << k;
      for (int k = 0; k < 16; ++k)
        for (int n = 0; n < 8; ++n) ASSERT_EQ(b_set[k][n], 1) << k << " " << n;
      for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 8; ++n)
          for (int k = 0; k < 16; ++k) c[m][n] += long(A[m][k]) * B[k][n];
    }
    for (int m = 0; m < 16; ++m) {
      for (int n = 0; n < 8; ++n) {
        long ref = 0;
        for (int p = 0; p < 32; ++p) ref += long(x[m][p]) * reference_element(f, w[n], p);
        EXPECT_EQ(c[m][n], ref) << "format " << int(f) << " m " << m << " n " << n;
      }
    }
  }
}

// The C fragment map the epilogue uses covers the 16x8 tile once.
TEST(QuantMmaLayout, AccumulatorMapCoversTheTile) {
  int seen[16][8] = {};
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) ++seen[ml::c_row(lane, i)][ml::c_col(lane, i)];
  for (auto& row : seen)
    for (int v : row) EXPECT_EQ(v, 1);
}

}  // namespace
