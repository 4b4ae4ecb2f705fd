// The transposed epilogue through shared memory (gemm_wgmma_epilogue_trans.cuh, sixth session,
// issue 3's 4095x4097x4099): taken where the planner swapped the operands (C^T = B^T A^T) and C
// is 16-bit with beta == 0. Checked against float64 with odd ldc (C rows start at both 4-byte
// parities), ragged M and N (blocks below M, tiles right of N), every transpose, batched, each
// tile width (the heuristic's 64 and 128 columns: one round; 128 x 256: two rounds); and bitwise
// equal to the 2-byte register stores it replaces (TC_WGMMA_EPILOGUE=trans_regs). beta != 0
// keeps the register stores: checked too. C is poisoned where beta = 0 and every leading
// dimension's padding must stay untouched (run_gemm_case).
#include <string>

#include "wgmma_test_fixture.h"

namespace tc::test {
namespace {

const GemmDtypes kBf16{TC_DTYPE_BF16, TC_DTYPE_BF16, TC_DTYPE_F32};
const GemmDtypes kF16{TC_DTYPE_F16, TC_DTYPE_F16, TC_DTYPE_F32};

class CudaWgmmaUnaligned : public WgmmaPathTest {
 protected:
  static tc_gemm_desc desc(int M, int N, int K, tc_dtype_t t, int tr) {
    tc_gemm_desc d{};
    d.M = M, d.N = N, d.K = K;  // contiguous: every odd extent is an odd pitch
    d.a_dtype = d.b_dtype = d.c_dtype = t;
    d.accum_dtype = TC_DTYPE_F32;
    d.transpose_a = tr & 2, d.transpose_b = tr & 1;
    d.alpha = 1.25f, d.beta = 0.0f;
    return d;
  }
  ScopedEnv swap_{"TC_WGMMA_SWAP", "1"};
};

TEST_F(CudaWgmmaUnaligned, StagedTransposedEpilogueMatchesFloat64) {
  for (const char* wide : {"0", "1"}) {  // the heuristic's tiles, then 128 x 256 (two rounds)
    ScopedEnv tile("TC_USE_128_TILE", wide);
    for (const GemmDtypes& t : {kBf16, kF16})
      for (int tr = 0; tr < 4; ++tr) {
        const bool ta = tr & 2, tb = tr & 1;
        GemmCase a{131, 97, 263, ta, tb, 0.75f, 0.0f};
        a.ld_pad = 1;
        check(a, t, "_swapab");
        GemmCase b{300, 517, 200, ta, tb, 1.0f, 0.0f};
        b.ld_pad = 2;  // ldc 519
        check(b, t, "_swapab");
        GemmCase c{129, 200, 72, ta, tb, 1.5f, 0.0f};
        c.ld_pad = 1;
        c.batch = 3;
        check(c, t, "_swapab");
        GemmCase beta{131, 97, 263, ta, tb, 1.0f, -0.5f};  // register stores (beta != 0)
        beta.ld_pad = 1;
        check(beta, t, "_swapab");
      }
  }
}

TEST_F(CudaWgmmaUnaligned, StagedEpilogueBitwiseEqualsRegisterStores) {
  const int shapes[][3] = {{77, 91, 103}, {300, 517, 200}};
  for (const char* wide : {"0", "1"}) {
    ScopedEnv tile("TC_USE_128_TILE", wide);
    for (const auto& s : shapes)
      for (int tr = 0; tr < 4; ++tr)
        for (int batch : {1, 2}) {
          const tc_dtype_t t = tr == 1 ? TC_DTYPE_F16 : TC_DTYPE_BF16;
          const GemmInputs in = make_inputs(desc(s[0], s[1], s[2], t, tr), batch, 9 + tr);
          const RunResult staged = bytes(in);
          RunResult regs;
          {
            ScopedEnv knob("TC_WGMMA_EPILOGUE", "trans_regs");
            regs = bytes(in);
          }
          // Each side ran the epilogue it names (else this would compare a path with itself).
          EXPECT_NE(staged.instance.find("_swapab_stagedc"), std::string::npos) << staged.instance;
          EXPECT_NE(regs.instance.find("_swapab"), std::string::npos) << regs.instance;
          EXPECT_EQ(regs.instance.find("_stagedc"), std::string::npos) << regs.instance;
          EXPECT_EQ(staged.c, regs.c) << s[0] << "x" << s[1] << "x" << s[2] << " transposes " << tr
                                      << " batch " << batch << " wide " << wide;
        }
  }
}

}  // namespace
}  // namespace tc::test
