// The own 1-pass TF32 kernel (gemm_tf32.h, row gemm_tf32_own, on only with TC_TF32_OWN=1):
//  - everywhere (no GPU): the planner's decline reasons and the direct-read rule;
//  - on sm_90a: every transpose against float64 with a TF32 bound, odd shapes and pitches (the
//    copied operands), beta != 0, C poisoned where beta = 0 and its row padding guarded
//    (run_gemm_case), the instance name naming the path (direct / copied operands / NN with
//    B^T in registers, and the copy of B instead under TC_TF32_OWN=pack), bitwise
//    repeats, and bitwise equality of the four transposes of the same product: a copied
//    operand holds the same raw f32 bits K-major as the direct read, so the kernel sees the same
//    shared memory either way;
//  - the row declines without the knob.
// Written without device time (2026-11-30): the GPU cases have not run yet.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/gemm_tf32.h"
#include "wgmma_test_fixture.h"

namespace tc::test {
namespace {

// tf32 keeps 10 mantissa bits (inputs read by truncation): ~1e-3 rms_scaled for uniform inputs
// whatever K; the cuBLASLt tf32 row's tests allow 3e-3.
constexpr double kTf32Bound = 2e-3;
const GemmDtypes kTf32{TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_TF32};

GemmProblem problem(bool ta, bool tb, tc_dtype_t accum) {
  GemmProblem p;
  p.d.M = 100, p.d.N = 60, p.d.K = 40;
  p.d.a_dtype = p.d.b_dtype = p.d.c_dtype = TC_DTYPE_F32;
  p.d.accum_dtype = accum;
  p.d.transpose_a = ta, p.d.transpose_b = tb;
  return p;
}

bool has(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

TEST(Tf32OwnPlanner, DeclineReasons) {
  using cuda::tf32_decline;
  const GemmProblem ok = problem(false, true, TC_DTYPE_TF32);
  EXPECT_EQ(tf32_decline(ok, "1", 9, 0, true), "");
  EXPECT_TRUE(has(tf32_decline(problem(false, true, TC_DTYPE_F32), "1", 9, 0, true), "accum"));
  GemmProblem bf = ok;
  bf.d.a_dtype = bf.d.b_dtype = TC_DTYPE_BF16;
  EXPECT_TRUE(has(tf32_decline(bf, "1", 9, 0, true), "f32 inputs"));
  for (const char* knob : {static_cast<const char*>(nullptr), "0", "", "yes"})
    EXPECT_TRUE(has(tf32_decline(ok, knob, 9, 0, true), "TC_TF32_OWN=1"))
        << (knob ? knob : "unset");
  GemmProblem batched = ok;
  batched.batch = 2;
  EXPECT_TRUE(has(tf32_decline(batched, "1", 9, 0, true), "batch 1"));
  EXPECT_TRUE(has(tf32_decline(ok, "1", 8, 0, true), "sm_90a"));
  EXPECT_TRUE(has(tf32_decline(ok, "1", 10, 0, true), "sm_90a"));
  EXPECT_TRUE(has(tf32_decline(ok, "1", 9, 0, false), "sm_90a"));
  // Every transpose is served (the MN-major operand is copied).
  for (int tr = 0; tr < 4; ++tr)
    EXPECT_EQ(tf32_decline(problem(tr & 2, tr & 1, TC_DTYPE_TF32), "1", 9, 0, true), "") << tr;
}

TEST(Tf32OwnPlanner, NnInRegistersRule) {
  using cuda::tf32_nn_in_registers;
  alignas(16) static float buf[8];
  GemmProblem nn = problem(false, false, TC_DTYPE_TF32);
  nn.b = buf;
  nn.d.ldb = 60;
  EXPECT_TRUE(tf32_nn_in_registers(nn, "1"));
  EXPECT_FALSE(tf32_nn_in_registers(nn, "pack"));  // the A/B: B copied K-major instead
  EXPECT_EQ(cuda::tf32_decline(nn, "pack", 9, 0, true), "");
  for (int tr = 1; tr < 4; ++tr) {
    GemmProblem other = nn;
    other.d.transpose_a = tr & 2, other.d.transpose_b = tr & 1;
    EXPECT_FALSE(tf32_nn_in_registers(other, "1")) << tr;
  }
  GemmProblem odd = nn;
  odd.d.ldb = 61;  // B's boxes need a 16-byte pitch
  EXPECT_FALSE(tf32_nn_in_registers(odd, "1"));
  odd = nn;
  odd.b = buf + 1;
  EXPECT_FALSE(tf32_nn_in_registers(odd, "1"));
}

TEST(Tf32OwnPlanner, DirectReadRule) {
  using cuda::tf32_direct;
  alignas(16) static float buf[8];
  EXPECT_TRUE(tf32_direct(true, buf, 1000));  // 4000-byte pitch
  EXPECT_TRUE(tf32_direct(true, buf, 4));
  EXPECT_FALSE(tf32_direct(false, buf, 1000));     // MN-major: wgmma tf32 reads K-major only
  EXPECT_FALSE(tf32_direct(true, buf + 1, 1000));  // 4-byte base
  EXPECT_FALSE(tf32_direct(true, buf + 2, 1000));  // 8-byte base
  EXPECT_FALSE(tf32_direct(true, buf, 1001));
  EXPECT_FALSE(tf32_direct(true, buf, 1002));
}

class CudaTf32Own : public WgmmaPathTest {
 protected:
  // The instance suffix the plan must take: an operand is read in place when K-major with a
  // 16-byte pitch (the API's buffers are 256-byte aligned); NN with B's pitch a 16-byte
  // multiple runs with B^T in registers (_areg) unless the knob says pack.
  static std::string path(const GemmCase& c, bool pack_knob) {
    const int64_t lda = (c.ta ? c.M : c.K) + c.ld_pad, ldb = (c.tb ? c.K : c.N) + c.ld_pad;
    const bool areg = !c.ta && !c.tb && !pack_knob && ldb % 4 == 0;
    const bool pa = c.ta || lda % 4 != 0, pb = !areg && (!c.tb || ldb % 4 != 0);
    return std::string(areg ? "_areg" : "") +
           (pa ? (pb ? "_packab" : "_packa") : (pb ? "_packb" : "_direct"));
  }
  void check_tf32(const GemmCase& c) {
    const double err = run_gemm_case(g_.ctx, c, kTf32, rng_);
    const std::string inst = tc_last_instance();
    const std::string what = describe(c, kTf32) + " (" + inst + ")";
    EXPECT_GE(err, 0.0) << what << ": wrote outside C or left a beta = 0 output unwritten";
    EXPECT_LE(err, kTf32Bound) << what;
    EXPECT_TRUE(has(inst, "gemm_wgmma_tf32_f32_")) << what;
    const std::string want = path(c, pack_);
    EXPECT_TRUE(has(inst, ("_s6" + want).c_str())) << what << ": want " << want;
  }
  bool pack_ = false;  // TC_TF32_OWN=pack
  ScopedEnv own_row_{"TC_GEMM_ROW", "gemm_tf32_own"};
  ScopedEnv knob_{"TC_TF32_OWN", "1"};
};

TEST_F(CudaTf32Own, EveryTransposeMatchesFloat64) {
  for (const char* knob : {"1", "pack"})
    for (int tr = 0; tr < 4; ++tr) {
      ScopedEnv form("TC_TF32_OWN", knob);
      pack_ = std::string(knob) == "pack";
      const bool ta = tr & 2, tb = tr & 1;
      check_tf32(GemmCase{131, 97, 264, ta, tb, 0.75f, 0.0f});  // K % 4 == 0: direct where K-major
      check_tf32(GemmCase{257, 129, 1001, ta, tb, 1.0f, -0.5f});  // K odd: copied, beta != 0
      check_tf32(GemmCase{1, 1, 1, ta, tb, 1.0f, 0.0f});
      check_tf32(GemmCase{3, 200, 7, ta, tb, -1.25f, 2.0f});
      check_tf32(GemmCase{300, 260, 1024, ta, tb, 1.0f, 0.0f});  // 3 x 3 tiles, 32 k-blocks
      GemmCase pad{129, 131, 136, ta, tb, 0.5f, 0.0f};
      pad.ld_pad = 3;  // odd pitches: copied operands, C's padding guarded, direct C stores
      check_tf32(pad);
      pad.ld_pad = 4;  // 16-byte pitches again: direct where K-major, TMA stores for C
      pad.beta = 0.25f;
      check_tf32(pad);
      // N % 4 == 0 (or ldb = 132): NN takes B^T in registers, with A in place or copied, C
      // written transposed from registers into padded rows.
      check_tf32(GemmCase{255, 132, 520, ta, tb, 1.0f, 0.0f});
      check_tf32(GemmCase{133, 68, 301, ta, tb, 0.5f, 1.5f});
      GemmCase nn_pad{129, 131, 136, ta, tb, 1.0f, 0.0f};
      nn_pad.ld_pad = 1;
      check_tf32(nn_pad);
    }
}

// The four transposes of one product (host-side transposed copies of A and B) and a repeat
// give the same bits where the kernel reads the same raw f32 values K-major from shared memory
// (TC_TF32_OWN=pack); NN with B^T in registers repeats bit for bit and stays within the TF32
// bound of that result.
TEST_F(CudaTf32Own, TransposesAndRepeatsBitwiseEqual) {
  ScopedEnv form("TC_TF32_OWN", "pack");
  const int M = 133, N = 76, K = 300;  // N % 4 == 0: NN may keep B^T in registers
  tc_gemm_desc d{};
  d.M = M, d.N = N, d.K = K;
  d.a_dtype = d.b_dtype = d.c_dtype = TC_DTYPE_F32;
  d.accum_dtype = TC_DTYPE_TF32;
  d.alpha = 1.5f, d.beta = -0.75f;
  d.transpose_b = true;  // NT: both operands K-major, read in place
  const GemmInputs nt = make_inputs(d, 1, 77);
  auto transposed = [](const std::vector<uint8_t>& src, int rows, int cols) {
    std::vector<uint8_t> dst(src.size());
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        std::memcpy(&dst[(size_t(c) * rows + r) * 4], &src[(size_t(r) * cols + c) * 4], 4);
    return dst;
  };
  const RunResult ref = bytes(nt);
  EXPECT_TRUE(has(ref.instance, "_direct")) << ref.instance;
  EXPECT_EQ(bytes(nt).c, ref.c) << "repeat differs";
  for (int tr : {0, 2, 3}) {  // NN, TN, TT
    GemmInputs in = nt;
    in.d.transpose_a = tr & 2, in.d.transpose_b = tr & 1;
    if (in.d.transpose_a) in.a = transposed(nt.a, M, K);   // A stored K x M
    if (!in.d.transpose_b) in.b = transposed(nt.b, N, K);  // B stored K x N
    const RunResult r = bytes(in);
    EXPECT_TRUE(has(r.instance, "_pack")) << r.instance;
    EXPECT_EQ(r.c, ref.c) << "transposes " << tr << " differ from NT (" << r.instance << ")";
  }
  ScopedEnv regs("TC_TF32_OWN", "1");
  GemmInputs nn = nt;
  nn.d.transpose_b = false;
  nn.b = transposed(nt.b, N, K);
  const RunResult r1 = bytes(nn), r2 = bytes(nn);
  EXPECT_TRUE(has(r1.instance, "_areg_direct")) << r1.instance;
  EXPECT_EQ(r1.c, r2.c) << "NN in registers: repeat differs";
  ASSERT_EQ(r1.c.size(), ref.c.size());
  double diff = 0, norm = 0;
  for (size_t i = 0; i < ref.c.size() / 4; ++i) {
    float x, y;
    std::memcpy(&x, &r1.c[4 * i], 4);
    std::memcpy(&y, &ref.c[4 * i], 4);
    diff += (double(x) - y) * (double(x) - y);
    norm += double(y) * y;
  }
  EXPECT_LE(std::sqrt(diff / norm), kTf32Bound) << "NN in registers against the K-major form";
}

TEST_F(CudaTf32Own, DeclinedWithoutKnob) {
  ScopedEnv off("TC_TF32_OWN", nullptr);
  tc_gemm_desc d{};
  d.M = 64, d.N = 64, d.K = 64;
  d.a_dtype = d.b_dtype = d.c_dtype = TC_DTYPE_F32;
  d.accum_dtype = TC_DTYPE_TF32;
  const RunResult r = run_gemm_bytes(g_.ctx, make_inputs(d, 1, 3));
  EXPECT_EQ(r.status, TC_ERROR_NOT_SUPPORTED) << r.instance;
  EXPECT_TRUE(has(r.message, "TC_TF32_OWN")) << r.message;
}

}  // namespace
}  // namespace tc::test
