// The fixture of the sm_90a wgmma kernel's path tests (test_gemm_wgmma_odd.cpp,
// test_gemm_wgmma_unaligned.cpp): the wgmma row forced, the static ladder (no autotuning), a
// skip without an sm_90a device, and one case checked against float64 with the instance name
// that proves the path under test ran.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/backends.h"
#include "common/gemm_case.h"
#include "common/reference.h"
#include "cuda_test_util.h"

namespace tc::test {

class WgmmaPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TC_CONTEXT_OR_SKIP(g_, TC_DEVICE_CUDA);
    if (!context_is_sm90a(g_.ctx)) GTEST_SKIP() << "needs sm_90a";
  }

  // One case on the wgmma row; `want` must appear in the instance name (and `not_want` not), so
  // the path under test cannot be skipped silently.
  void check(const GemmCase& c, const GemmDtypes& t, const char* want,
             const char* not_want = nullptr) {
    const double err = run_gemm_case(g_.ctx, c, t, rng_);
    const std::string inst = tc_last_instance();
    const std::string what = describe(c, t) + " (" + inst + ")";
    EXPECT_GE(err, 0.0) << what << ": wrote outside C or left a beta = 0 output unwritten";
    EXPECT_LE(err, t.in == TC_DTYPE_I8 ? 0.0 : gemm_tolerance(t.in, t.out)) << what;
    EXPECT_NE(inst.find(want), std::string::npos) << what;
    if (not_want) {
      EXPECT_EQ(inst.find(not_want), std::string::npos) << what;
    }
  }

  RunResult bytes(const GemmInputs& in) {
    RunResult r = run_gemm_bytes(g_.ctx, in);
    EXPECT_EQ(r.status, TC_SUCCESS) << r.message;
    return r;
  }

  ContextGuard g_;
  std::mt19937_64 rng_{2026};
  ScopedEnv row_{"TC_GEMM_ROW", "gemm_wgmma"};
  ScopedEnv tune_{"TC_AUTOTUNE", "0"};
};

}  // namespace tc::test
