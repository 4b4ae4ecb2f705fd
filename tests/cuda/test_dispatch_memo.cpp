// The dispatch's per-thread decision memo (core/dispatch.cpp): a call whose signature differs
// from an earlier one in a single field (dtype, transposes, leading dimensions, alpha / beta,
// batch, M) must run what a thread that never saw the earlier call runs, and give the float64
// answer. Each step runs twice on one thread (the second call is served by the memo) and once on
// a fresh thread (empty memo). On the CPU the rows differ by dtype only; on the GPU (skipped
// without one) transposes, pitches and small M change the kernel too. Knobs read while deciding
// (TC_GEMM_ROW, TC_AUTOTUNE) take effect on the next call although its signature was seen.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/backends.h"
#include "common/gemm_case.h"
#include "common/reference.h"
#include "core/autotune.h"
#include "cuda_test_util.h"

namespace tc::test {
namespace {

struct Step {
  const char* what;
  GemmCase c;
  GemmDtypes t;
};

struct Ran {
  double rms = -1;
  std::string instance;
};

Ran run_once(tc_context_t* ctx, const Step& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Ran r;
  r.rms = run_gemm_case(ctx, s.c, s.t, rng);
  r.instance = tc_last_instance();
  return r;
}

Ran run_on_fresh_thread(tc_context_t* ctx, const Step& s, uint64_t seed) {
  Ran r;
  std::thread([&] { r = run_once(ctx, s, seed); }).join();
  return r;
}

// Runs the steps in order on this thread; each must match a fresh thread and float64.
void run_steps(tc_context_t* ctx, const std::vector<Step>& steps) {
  uint64_t seed = 11;
  for (const Step& s : steps) {
    SCOPED_TRACE(std::string(s.what) + ": " + describe(s.c, s.t));
    const double tol = s.t.accum == TC_DTYPE_TF32 ? 3e-3 : gemm_tolerance(s.t.in, s.t.out);
    const Ran first = run_once(ctx, s, ++seed);
    const Ran again = run_once(ctx, s, ++seed);
    const Ran fresh = run_on_fresh_thread(ctx, s, ++seed);
    EXPECT_GE(first.rms, 0.0);
    EXPECT_LE(first.rms, tol);
    EXPECT_GE(again.rms, 0.0);
    EXPECT_LE(again.rms, tol);
    EXPECT_GE(fresh.rms, 0.0);
    EXPECT_EQ(again.instance, first.instance);
    EXPECT_EQ(again.instance, fresh.instance) << "the memo reused another signature's decision";
  }
}

constexpr GemmDtypes kF32{TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32};
constexpr GemmDtypes kTf32{TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_TF32};
constexpr GemmDtypes kF16{TC_DTYPE_F16, TC_DTYPE_F16, TC_DTYPE_F32};
constexpr GemmDtypes kBf16{TC_DTYPE_BF16, TC_DTYPE_BF16, TC_DTYPE_F32};
constexpr GemmDtypes kI8{TC_DTYPE_I8, TC_DTYPE_I32, TC_DTYPE_I32};

GemmCase shape(int32_t M, int32_t N, int32_t K) {
  GemmCase c{};
  c.M = M, c.N = N, c.K = K;
  return c;
}

GemmCase with(GemmCase c, bool ta, bool tb, int32_t ld_pad = 0, float alpha = 1.0f,
              float beta = 0.0f) {
  c.ta = ta, c.tb = tb, c.ld_pad = ld_pad, c.alpha = alpha, c.beta = beta;
  return c;
}

TEST(DispatchMemo, CpuEachFieldChangeDecidesAfresh) {
  ContextGuard g;
  TC_CONTEXT_OR_SKIP(g, TC_DEVICE_CPU);
  ScopedEnv no_force("TC_GEMM_ROW", nullptr);
  const GemmCase base = shape(37, 29, 41);
  // Same dimensions throughout: only the field named changes from one step to the next.
  run_steps(g.ctx, {{"f32", base, kF32},
                    {"dtype f16", base, kF16},
                    {"dtype i8", base, kI8},
                    {"dtype bf16", base, kBf16},
                    {"transposes", with(base, true, true), kBf16},
                    {"ld", with(base, true, true, 3), kBf16},
                    {"alpha, beta", with(base, true, true, 3, -1.5f, 0.5f), kBf16},
                    {"dtype f32 again", with(base, true, true, 3, -1.5f, 0.5f), kF32},
                    {"i8 with beta 1", with(base, false, true, 0, 1.0f, 1.0f), kI8},
                    {"f32 as first", base, kF32}});
}

TEST(DispatchMemo, CpuForcedRowWinsOverARememberedDecision) {
  ContextGuard g;
  TC_CONTEXT_OR_SKIP(g, TC_DEVICE_CPU);
  ScopedEnv no_force("TC_GEMM_ROW", nullptr);
  const Step s{"i8", shape(23, 31, 64), kI8};
  const Ran chosen = run_once(g.ctx, s, 1);
  ASSERT_EQ(run_once(g.ctx, s, 2).instance, chosen.instance);
  {
    ScopedEnv force("TC_GEMM_ROW", "gemm_cpu_i8_i32_scalar");
    const Ran forced = run_once(g.ctx, s, 3);
    EXPECT_EQ(forced.instance, "gemm_cpu_i8_i32_scalar");
    EXPECT_GE(forced.rms, 0.0);
    EXPECT_LE(forced.rms, gemm_tolerance(s.t.in, s.t.out));
  }
  EXPECT_EQ(run_once(g.ctx, s, 4).instance, chosen.instance);
}

class CudaDispatchMemo : public ::testing::Test {
 protected:
  void SetUp() override { TC_CONTEXT_OR_SKIP(g_, TC_DEVICE_CUDA); }
  ContextGuard g_;
  TempDir dir_;
  ScopedEnv no_force_{"TC_GEMM_ROW", nullptr};
};

TEST_F(CudaDispatchMemo, EachFieldChangeDecidesAfresh) {
  ScopedEnv ladder("TC_AUTOTUNE", "0");  // the ladder: no tuning time, same answer per thread
  const GemmCase base = shape(200, 136, 96);
  run_steps(g_.ctx, {{"f16 NN", base, kF16},
                     {"NT", with(base, false, true), kF16},
                     {"TN", with(base, true, false), kF16},
                     {"odd ld (not TMA-legal)", with(base, false, true, 1), kF16},
                     {"alpha, beta", with(base, false, true, 1, -1.5f, 0.5f), kF16},
                     {"bf16", with(base, false, true, 1, -1.5f, 0.5f), kBf16},
                     {"f32 exact", with(base, false, true), kF32},
                     {"tf32", with(base, false, true), kTf32},
                     {"i8", with(base, false, true), kI8},
                     {"M = 8 (decode)", with(shape(8, 136, 96), false, true), kF16},
                     {"M = 8, B not transposed", shape(8, 136, 96), kF16},
                     {"f16 NN as first", base, kF16}});
  GemmCase batched = with(base, false, true);
  batched.batch = 3;
  run_steps(g_.ctx, {{"batch 3", batched, kF16}, {"batch 1", with(base, false, true), kF16}});
}

// TC_AUTOTUNE read while deciding: toggling it between two calls of one signature switches
// between the cache's winner and the ladder.
TEST_F(CudaDispatchMemo, AutotuneKnobAndCacheFileTakeEffectOnARememberedSignature) {
  ScopedEnv tune_on("TC_AUTOTUNE", nullptr);
  const Step s{"f16 NT", with(shape(211, 4000, 520), false, true), kF16};
  const std::string first = dir_.path() + "/first.json";
  std::map<std::string, autotune::Entry> entries;
  {
    ScopedEnv cache("TC_AUTOTUNE_CACHE", first.c_str());
    const Ran tuned = run_once(g_.ctx, s, 1);  // tunes and stores the class's winner
    ASSERT_GE(tuned.rms, 0.0);
    EXPECT_LE(tuned.rms, gemm_tolerance(s.t.in, s.t.out));
    ASSERT_TRUE(autotune::parse(read_text(first), &entries)) << read_text(first);
    ASSERT_EQ(entries.size(), 1u);
  }
  // Another process's file names the row the tuner did not choose.
  auto& e = entries.begin()->second;
  const bool was_cublas = e.row.rfind("gemm_cublaslt", 0) == 0;
  e.row = was_cublas ? "gemm_wgmma" : "gemm_cublaslt_f16";
  e.variant = 0;
  const std::string second = dir_.path() + "/second.json";
  write_text(second, autotune::serialize(entries));
  ScopedEnv cache("TC_AUTOTUNE_CACHE", second.c_str());
  tc_device_info info;
  tc_context_device_info(g_.ctx, &info);
  if (was_cublas && !(info.cc_major == 9 && info.cc_minor == 0))
    GTEST_SKIP() << "the tuner chose cuBLASLt and " << info.name << " has no wgmma row";
  const Ran obeyed = run_once(g_.ctx, s, 2);
  EXPECT_EQ(obeyed.instance.rfind(e.row, 0), 0u) << obeyed.instance << " vs " << e.row;
  EXPECT_EQ(run_once(g_.ctx, s, 3).instance, obeyed.instance);
  {
    ScopedEnv off("TC_AUTOTUNE", "0");
    const Ran ladder = run_once(g_.ctx, s, 4);
    EXPECT_EQ(ladder.instance, run_on_fresh_thread(g_.ctx, s, 5).instance);
    EXPECT_NE(ladder.instance.rfind("gemm_cublaslt", 0), 0u) << "the ladder puts own kernels first";
  }
  EXPECT_EQ(run_once(g_.ctx, s, 6).instance, obeyed.instance);
}

}  // namespace
}  // namespace tc::test
