// The tensor-core fragment maps (phobos/src/emit/mma_map.inc, the same text the generated CUDA
// includes) checked on the CPU: ldmatrix is simulated from its PTX definition (lane i supplies
// the row address of row i % 8 of matrix i / 8; without .trans lane l receives elements
// (l / 4, 2 (l % 4) .. +1) of each matrix, with .trans elements (2 (l % 4) .. +1, l / 4)), fed
// the addresses the maps give, and the registers each lane receives are compared with the
// mma.m16n8k16 fragment layouts of the PTX ISA. A wrong map fails here, not on the GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#define PH_HD inline
#include "emit/mma_map.inc"

namespace {

using Elem = std::pair<int, int>;  // (row, col) of the operand tile in shared memory
using Reg = std::array<Elem, 2>;   // one 32-bit register: two 16-bit elements, low first

// ldmatrix.x4 (or .x2 when nmat == 2): lane -> nmat registers, given each lane's row address.
std::array<std::array<Reg, 4>, 32> ldmatrix(const std::function<Elem(int)>& addr, int nmat,
                                            bool trans) {
  std::array<std::array<Reg, 4>, 32> out{};
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < nmat; ++j)
      for (int h = 0; h < 2; ++h) {
        if (!trans) {
          Elem base = addr(8 * j + l / 4);  // the row this lane's pair sits in
          out[l][j][h] = {base.first, base.second + 2 * (l % 4) + h};
        } else {
          Elem base = addr(8 * j + 2 * (l % 4) + h);
          out[l][j][h] = {base.first, base.second + l / 4};
        }
      }
  return out;
}

TEST(PhobosMmaMap, AFragmentFromLdmatrixX4) {
  auto got = ldmatrix([](int l) { return Elem{ph_lda_row(l), ph_lda_col(l)}; }, 4, false);
  for (int l = 0; l < 32; ++l) {
    int g = l / 4, q = l % 4;
    // PTX: a0 = A[g][2q..], a1 = A[g+8][2q..], a2 = A[g][2q+8..], a3 = A[g+8][2q+8..]
    int rows[4] = {g, g + 8, g, g + 8}, cols[4] = {2 * q, 2 * q, 2 * q + 8, 2 * q + 8};
    for (int j = 0; j < 4; ++j)
      for (int h = 0; h < 2; ++h)
        EXPECT_EQ(got[l][j][h], Elem(rows[j], cols[j] + h)) << "lane " << l << " a" << j;
  }
}

// B (16x8 per n-tile, k x n): b0 = B[2q..2q+1][g], b1 = B[2q+8..2q+9][g]; x4 covers n-tiles
// 0 (registers 0, 1) and 1 (registers 2, 3). Expected as (k, n).
void check_b(const std::array<std::array<Reg, 4>, 32>& got, bool kn_order, int nmat) {
  for (int l = 0; l < 32; ++l) {
    int g = l / 4, q = l % 4;
    for (int j = 0; j < nmat; ++j)
      for (int h = 0; h < 2; ++h) {
        int k = 2 * q + h + (j % 2) * 8, n = g + (j / 2) * 8;
        Elem want = kn_order ? Elem(k, n) : Elem(n, k);
        EXPECT_EQ(got[l][j][h], want) << "lane " << l << " register " << j;
      }
  }
}

TEST(PhobosMmaMap, BFragmentOfDotTFromLdmatrix) {
  // dot_t: B is stored [n][k], loaded without .trans.
  auto addr = [](int l) { return Elem{ph_ldbt_row(l), ph_ldbt_col(l)}; };
  check_b(ldmatrix(addr, 4, false), false, 4);
  check_b(ldmatrix(addr, 2, false), false, 2);
}

TEST(PhobosMmaMap, BFragmentOfDotFromLdmatrixTrans) {
  // dot: B is stored [k][n], loaded with .trans.
  auto addr = [](int l) { return Elem{ph_ldb_row(l), ph_ldb_col(l)}; };
  check_b(ldmatrix(addr, 4, true), true, 4);
  check_b(ldmatrix(addr, 2, true), true, 2);
}

TEST(PhobosMmaMap, AccumulatorMapIsTheCFragment) {
  // PTX: c0..1 = C[g][2q..2q+1], c2..3 = C[g+8][2q..2q+1]; every element of the 16x8 tile once.
  int seen[16][8] = {};
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      int r = ph_c_row(l, i), c = ph_c_col(l, i);
      EXPECT_EQ(r, l / 4 + (i >= 2 ? 8 : 0));
      EXPECT_EQ(c, 2 * (l % 4) + (i & 1));
      ASSERT_TRUE(r >= 0 && r < 16 && c >= 0 && c < 8);
      ++seen[r][c];
    }
  for (auto& row : seen)
    for (int v : row) EXPECT_EQ(v, 1);
}

TEST(PhobosMmaMap, LdmatrixRowsAreSixteenByteAlignedAndConflictFree) {
  // The emitter pads tensor-core tiles by 8 elements: with a pitch of (width + 8) 16-bit
  // elements, the eight rows one ldmatrix phase reads start in distinct 16-byte bank groups.
  for (int width : {16, 32, 64, 128}) {
    int pitch_bytes = (width + 8) * 2;
    for (int phase = 0; phase < 4; ++phase) {
      bool used[8] = {};
      for (int l = phase * 8; l < phase * 8 + 8; ++l) {
        int byte = ph_lda_row(l) * pitch_bytes + ph_lda_col(l) * 2;
        EXPECT_EQ(byte % 16, 0);
        int group = (byte / 16) % 8;  // 32 banks x 4 bytes = 8 groups of 16 bytes
        EXPECT_FALSE(used[group]) << "width " << width << " lane " << l;
        used[group] = true;
      }
    }
  }
}

}  // namespace

namespace {

// The wgmma side: a model of how the tensor core addresses a 128B-swizzled operand through a
// shared-memory matrix descriptor (start address, LBO, SBO; PTX ISA "Matrix Descriptor"), with
// the start advanced per k16 step as the emitter (and src/cuda/gemm_wgmma.cuh) does. Element
// (row, k) of a K-major m64 x k16 slice, or (k, n) of an N-major k16 x nN slice, is read at
// start + layout offset with address bits 4-6 XORed with bits 7-9; the emitter's fill must
// have put exactly that element there.
int64_t swizzle(int64_t byte) {
  return byte ^ (((byte >> 7) & 7) << 4);
}

TEST(PhobosMmaMap, WgmmaKMajorSliceMatchesTheFill) {
  for (int rows : {64, 128, 256})
    for (int kk = 0; kk < 4; ++kk)  // start + 32 bytes per k16 step
      for (int m = 0; m < rows; ++m)
        for (int k = 0; k < 16; ++k) {
          int64_t start = kk * 32, sbo = 1024;
          int64_t byte = swizzle(start + (m / 8) * sbo + (m % 8) * 128 + k * 2);
          EXPECT_EQ(byte, 2 * ph_sw128_k(m, kk * 16 + k)) << "m " << m << " kk " << kk;
        }
}

TEST(PhobosMmaMap, WgmmaNMajorSliceMatchesTheFill) {
  const int K = 64;  // rows of the [K][N] tile: one 128-byte swizzle atom of K per stage
  for (int N : {64, 128, 256})
    for (int kk = 0; kk < 4; ++kk)  // start + 16 K-rows (2048 bytes) per k16 step
      for (int k = 0; k < 16; ++k)
        for (int n = 0; n < N; ++n) {
          int64_t start = kk * 2048, lbo = K * 128, sbo = 1024;
          int64_t byte =
              swizzle(start + (n / 64) * lbo + (k / 8) * sbo + (k % 8) * 128 + (n % 64) * 2);
          EXPECT_EQ(byte, 2 * ph_sw128_n(kk * 16 + k, n, K)) << "k " << k << " n " << n;
        }
}

TEST(PhobosMmaMap, WgmmaSwizzleIsAPermutationOfChunks) {
  // Every 16-byte chunk of a row lands in that row, once: 16-byte fills stay contiguous.
  for (int r = 0; r < 16; ++r) {
    bool seen[8] = {};
    for (int c = 0; c < 64; c += 8) {
      int e = ph_sw128_k(r, c);
      EXPECT_EQ(e / 64, r);
      EXPECT_EQ(e % 8, 0);
      for (int v = 1; v < 8; ++v) EXPECT_EQ(ph_sw128_k(r, c + v), e + v);
      EXPECT_FALSE(seen[(e % 64) / 8]);
      seen[(e % 64) / 8] = true;
    }
  }
}

TEST(PhobosMmaMap, WgmmaAccumulatorCoversTheTileOnce) {
  for (int warpgroups : {1, 2})
    for (int N : {64, 128, 256}) {
      std::vector<int> seen(64 * warpgroups * N, 0);
      for (int t = 0; t < 128 * warpgroups; ++t)
        for (int i = 0; i < N / 2; ++i) {
          int r = ph_wg_row(t, i), c = ph_wg_col(t, i);
          ASSERT_TRUE(r >= 0 && r < 64 * warpgroups && c >= 0 && c < N);
          ++seen[r * N + c];
        }
      for (int v : seen) EXPECT_EQ(v, 1);
    }
  // Within one m64n8 block the layout is the mma.m16n8 C fragment per warp (16 rows each).
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(ph_wg_row(t, i), (t / 32) * 16 + ph_c_row(t % 32, i));
      EXPECT_EQ(ph_wg_col(t, i), ph_c_col(t % 32, i));
    }
}

}  // namespace
