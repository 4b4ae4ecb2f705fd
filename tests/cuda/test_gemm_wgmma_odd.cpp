// The sm_90a wgmma kernel's two odd-shape paths of the fifth session, both opt-in because they
// measured slower on the H200 (docs/gemm.md, round 7), and kept correct here:
//  - the vectorized re-pitching copy of 16-bit operands (gemm_pack_vec.cu, TC_WGMMA_PACK=vec):
//    odd pitches and misaligned batch bases in every transpose, against float64, and bitwise
//    equal to the default element-gathering copy, since the GEMM after the copy is the same;
//  - the in-cluster split-K (gemm_wgmma_ksplit.cuh): the heuristic's 2-way split on few tiles
//    (TC_WGMMA_CLUSTER_SPLITK=1) and variants 12..14 (TC_WGMMA_VARIANT) including ranks with an
//    empty K slice, with the TMA-store and register epilogues, batched, and bitwise-identical
//    repeats. The default stays the global split-K (partials + reduce kernel): checked too.
// C is poisoned where beta = 0 and every leading dimension's padding must stay untouched
// (run_gemm_case). The FastDiv check runs everywhere (no GPU needed).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "cuda/gemm_fastdiv.h"
#include "wgmma_test_fixture.h"

namespace tc::test {
namespace {

TEST(GemmFastDiv, MatchesDivision) {
  std::mt19937_64 rng(11);
  // Small, odd, the pack's row lengths in chunks (520, 8320) and the range's end (2^30 + 1, 2^31).
  const uint32_t divisors[] = {1,    2,     3,     5,       7,          8,          255,
                               256,  257,   513,   520,     4095,       4097,       4099,
                               8320, 65535, 65537, 1000003, 1073741825, 2147483648u};
  for (uint32_t d : divisors) {
    const tc::cuda::FastDiv f(d);
    auto check = [&](uint32_t n) {
      if (n >= (1u << 31)) return;
      ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
    };
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 2 * d, (1u << 31) - 1, (1u << 31) - 2})
      check(n);
    for (int i = 0; i < 20000; ++i) {
      const uint32_t n = uint32_t(rng() >> 33);  // < 2^31
      check(n);
      const uint32_t q = n / d;  // around multiples of d
      check(q * d);
      check(q * d - 1);
    }
  }
}

const GemmDtypes kBf16{TC_DTYPE_BF16, TC_DTYPE_BF16, TC_DTYPE_F32};
const GemmDtypes kF16F32{TC_DTYPE_F16, TC_DTYPE_F32, TC_DTYPE_F32};
const GemmDtypes kI8{TC_DTYPE_I8, TC_DTYPE_I32, TC_DTYPE_I32};

class CudaWgmmaOdd : public WgmmaPathTest {};

// Odd pitches (ld_pad 3) and odd batch strides: both operands are copied.
TEST_F(CudaWgmmaOdd, PackedOperandsMatchFloat64) {
  ScopedEnv vec("TC_WGMMA_PACK", "vec");
  for (const GemmDtypes& t : {kBf16, kF16F32})
    for (int tr = 0; tr < 4; ++tr)
      for (int batch : {1, 3}) {
        GemmCase c{131, 97, 263, bool(tr & 2), bool(tr & 1), 0.75f, batch == 1 ? 0.0f : -0.5f};
        c.ld_pad = 3;
        c.batch = batch;
        check(c, t, "_packed");
        GemmCase w{67, 251, 129, bool(tr & 2), bool(tr & 1), 1.25f, 0.0f};
        w.ld_pad = 1;
        check(w, t, "_packed");
      }
}

// The copy moves bytes only, so the new and the old copy must give the same C bit for bit.
TEST_F(CudaWgmmaOdd, VectorCopyBitwiseEqualsOldCopy) {
  for (int tr = 0; tr < 4; ++tr)
    for (int batch : {1, 2}) {
      tc_gemm_desc d{};
      d.M = 77, d.N = 91, d.K = 103;  // every pitch and batch stride odd
      d.a_dtype = d.b_dtype = TC_DTYPE_BF16;
      d.c_dtype = TC_DTYPE_F32;
      d.accum_dtype = TC_DTYPE_F32;
      d.transpose_a = tr & 2, d.transpose_b = tr & 1;
      d.alpha = 1.0f, d.beta = 0.5f;
      const GemmInputs in = make_inputs(d, batch, 5 + tr);
      const RunResult old = bytes(in);
      RunResult vec, again;
      {
        ScopedEnv knob("TC_WGMMA_PACK", "vec");
        vec = bytes(in);
        again = bytes(in);
      }
      EXPECT_NE(vec.instance.find("_packed"), std::string::npos) << vec.instance;
      EXPECT_EQ(vec.c, again.c) << "repeat differs, transposes " << tr << " batch " << batch;
      EXPECT_EQ(vec.c, old.c) << "old and new copy differ, transposes " << tr << " batch " << batch;
    }
}

// The heuristic's 2-way cluster split on few tiles: 64 x 64 tiles (6 and 25 of them) and
// 128 x 128 (36 tiles at 768^2), TMA-store (beta = 0) and register (beta != 0) epilogues.
TEST_F(CudaWgmmaOdd, ClusterSplitKHeuristic) {
  ScopedEnv on("TC_WGMMA_CLUSTER_SPLITK", "1");
  for (const GemmDtypes& t : {kBf16, kF16F32})
    for (int tr = 0; tr < 4; ++tr) {
      const bool ta = tr & 2, tb = tr & 1;
      check(GemmCase{131, 97, 1003, ta, tb, 0.75f, 0.0f}, t, "_clsplitk2");
      check(GemmCase{300, 260, 777, ta, tb, 1.0f, -1.5f}, t, "_clsplitk2");
      GemmCase p{131, 97, 1003, ta, tb, 0.5f, 0.25f};
      p.ld_pad = 5;  // packed operands, unaligned C
      p.batch = 2;
      check(p, t, "_clsplitk2");
    }
  check(GemmCase{768, 768, 515, false, false, 1.0f, 0.0f}, kBf16,
        "_bm128_bn128_bk64_s6_packed_clsplitk2");  // lda 515: A is copied
}

// Variants 12 = 128 x 128 by 2, 13 = 128 x 128 by 4, 14 = 64 x 128 by 2; K = 70
// is two k-blocks, so ranks 2 and 3 of variant 13 have empty slices. int8 (exact) declines them.
TEST_F(CudaWgmmaOdd, ClusterSplitKVariants) {
  const char* names[] = {"_clsplitk2", "_clsplitk4", "_clsplitk2"};
  for (int v = 12; v <= 14; ++v) {
    ScopedEnv var("TC_WGMMA_VARIANT", std::to_string(v).c_str());
    for (int tr = 0; tr < 4; ++tr) {
      const bool ta = tr & 2, tb = tr & 1;
      check(GemmCase{257, 131, 1031, ta, tb, 0.75f, 0.0f}, kBf16, names[v - 12]);
      check(GemmCase{129, 200, 70, ta, tb, 1.0f, 2.0f}, kF16F32, names[v - 12]);
      GemmCase b{100, 77, 333, ta, tb, 1.0f, 0.0f};
      b.batch = 3;
      check(b, kF16F32, names[v - 12]);
      // int8 runs these variants unsplit (its 128 x 128 tile has a kernel of its own).
      check(GemmCase{130, 264, 600, ta, tb, 1.0f, tr == 1 ? 1.0f : 0.0f}, kI8, "gemm_wgmma_s8",
            "clsplitk");
    }
  }
}

TEST_F(CudaWgmmaOdd, ClusterSplitKBitwiseRepeats) {
  ScopedEnv on("TC_WGMMA_CLUSTER_SPLITK", "1");
  for (int v : {0, 13}) {
    ScopedEnv var("TC_WGMMA_VARIANT", std::to_string(v).c_str());
    tc_gemm_desc d{};
    d.M = 257, d.N = 263, d.K = 1009;
    d.a_dtype = d.b_dtype = TC_DTYPE_BF16;
    d.c_dtype = TC_DTYPE_F32;
    d.accum_dtype = TC_DTYPE_F32;
    d.alpha = 1.0f;
    const GemmInputs in = make_inputs(d, 1, 99);
    const RunResult first = bytes(in);
    EXPECT_NE(first.instance.find("clsplitk"), std::string::npos) << first.instance;
    for (int i = 0; i < 2; ++i) EXPECT_EQ(bytes(in).c, first.c) << "variant " << v << " run " << i;
  }
}

// By default, long K on few tiles takes the global split-K.
TEST_F(CudaWgmmaOdd, GlobalSplitKByDefault) {
  for (int tr = 0; tr < 4; ++tr) {
    GemmCase c{37, 201, 4100, bool(tr & 2), bool(tr & 1), 0.75f, tr == 2 ? 0.5f : 0.0f};
    c.ld_pad = 2;
    check(c, kBf16, "_splitk2", "clsplitk");
  }
}

}  // namespace
}  // namespace tc::test
