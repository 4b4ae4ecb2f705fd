// One GEMM (or batched GEMM) run through the public API against the float64 reference, with C
// poisoned where beta = 0 and the padding of every leading dimension checked to stay untouched.
#pragma once

#include <tc/tc.h>

#include <cstdint>
#include <random>
#include <string>

namespace tc::test {

struct GemmCase {
  int32_t M, N, K;
  bool ta = false, tb = false;
  float alpha = 1.0f, beta = 0.0f;
  int32_t ld_pad = 0;  // added to each leading dimension (0 keeps them contiguous: ld = 0)
  int32_t batch = 1;   // > 1 runs tc_gemm_batched
  bool broadcast_a = false, broadcast_b = false;
  bool use_async = false;
};

struct GemmDtypes {
  tc_dtype_t in, out, accum;
};

std::string describe(const GemmCase& c, const GemmDtypes& t);

// Runs the case on ctx and returns the worst rms_scaled over the batch (negative when the
// padding or a beta=0 output was wrong). Fails the current gtest on API errors.
double run_gemm_case(tc_context_t* ctx, const GemmCase& c, const GemmDtypes& t,
                     std::mt19937_64& rng);

}  // namespace tc::test
