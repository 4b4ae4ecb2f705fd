// tc's cuBLASLt row against cuBLASLt called directly, as the benchmark's peer calls it (its
// heuristic's first answer, a 32 MiB workspace, every reduction scheme allowed). The row's
// variant 0, which TC_GEMM_ROW=gemm_cublaslt runs and from which the tuner times the other
// candidates, must be that same algorithm (its instance name ends with the peer's
// cublaslt_algo_tag), except where the direct answer rounds split-K partial sums to a 16-bit C;
// then tc's variant 0 must be another algorithm that does not. The shapes include long-K ones
// where the heuristic splits K, and the decode shape whose tuned choice measured 0.94x of the
// direct call at 19:55 UTC (H200, 2026-11-29). Operands are left unfilled: only the choice of
// algorithm is compared here; the rows' results are checked against float64 in test_cuda_rows.
#include <gtest/gtest.h>

#include <string>

#include "common/backends.h"
#include "cuda_test_util.h"
#ifdef TC_TEST_HAVE_PEER
#include "cublaslt_peer.h"
#include "cuda/gemm_cublaslt_algo.h"
#endif

namespace tc::test {
namespace {

struct Shape {
  int M, N, K, batch;
  tc_dtype_t in, out, accum;
  bool ta, tb;
};

class CublasLtDirect : public ::testing::Test {
 protected:
  void SetUp() override { TC_CONTEXT_OR_SKIP(g_, TC_DEVICE_CUDA); }
  ContextGuard g_;
  ScopedEnv force_{"TC_GEMM_ROW", "gemm_cublaslt"};
};

TEST_F(CublasLtDirect, VariantZeroIsTheDirectCallersAlgorithm) {
#ifndef TC_TEST_HAVE_PEER
  GTEST_SKIP() << "built without the benchmark's cuBLASLt peer";
#else
  const Shape shapes[] = {
      {512, 512, 512, 1, TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32, false, false},
      {256, 256, 256, 1, TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_TF32, false, false},
      {128, 128, 8192, 1, TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_TF32, false, true},
      {64, 64, 16384, 1, TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32, false, false},
      {128, 128, 8192, 1, TC_DTYPE_BF16, TC_DTYPE_BF16, TC_DTYPE_F32, false, true},
      {64, 64, 16384, 1, TC_DTYPE_F16, TC_DTYPE_F32, TC_DTYPE_F32, false, false},
      {22, 14336, 4096, 1, TC_DTYPE_F16, TC_DTYPE_F16, TC_DTYPE_F32, false, true},
      {512, 512, 512, 32, TC_DTYPE_BF16, TC_DTYPE_BF16, TC_DTYPE_F32, false, false},
      {1000, 1000, 1000, 1, TC_DTYPE_BF16, TC_DTYPE_BF16, TC_DTYPE_F32, false, false},
      {256, 256, 256, 1, TC_DTYPE_I8, TC_DTYPE_I32, TC_DTYPE_I32, false, true},
  };
  bench::CublasLtPeer peer;
  int same = 0;
  for (const Shape& s : shapes) {
    const std::string what = std::to_string(s.M) + "x" + std::to_string(s.N) + "x" +
                             std::to_string(s.K) + " batch " + std::to_string(s.batch) + " " +
                             tc_dtype_name(s.in) + "->" + tc_dtype_name(s.out) +
                             (s.accum == TC_DTYPE_TF32 ? " tf32" : "");
    std::string why;
    ASSERT_TRUE(peer.prepare({s.M, s.N, s.K, s.batch, s.in, s.out, s.accum, s.ta, s.tb}, &why))
        << what << ": " << why;
    const size_t es = tc_dtype_size(s.in), eo = tc_dtype_size(s.out), n = size_t(s.batch);
    tc_buffer_t *a = nullptr, *b = nullptr, *c = nullptr;
    ASSERT_EQ(tc_buffer_alloc(g_.ctx, n * s.M * s.K * es, &a), TC_SUCCESS);
    ASSERT_EQ(tc_buffer_alloc(g_.ctx, n * s.K * s.N * es, &b), TC_SUCCESS);
    ASSERT_EQ(tc_buffer_alloc(g_.ctx, n * s.M * s.N * eo, &c), TC_SUCCESS);
    const tc_gemm_desc d{s.M,  s.N,  s.K,  s.in, s.in, s.out, s.accum,
                         s.ta, s.tb, 1.0f, 0.0f, 0,    0,     0};
    const tc_gemm_batched_desc bd{d, s.batch, int64_t(s.M) * s.K, int64_t(s.K) * s.N,
                                  int64_t(s.M) * s.N};
    const tc_status_t st =
        s.batch > 1 ? tc_gemm_batched(g_.ctx, &bd, a, b, c) : tc_gemm(g_.ctx, &d, a, b, c);
    const std::string instance = tc_last_instance();
    for (auto* x : {a, b, c}) tc_buffer_free(x);
    ASSERT_EQ(st, TC_SUCCESS) << what << ": " << tc_last_error_message();
    ASSERT_EQ(tc_last_backend(), TC_BACKEND_CUBLASLT) << what;
    const std::string tag = "_" + peer.algo_tag();
    const bool ends_with = instance.size() > tag.size() &&
                           instance.compare(instance.size() - tag.size(), tag.size(), tag) == 0;
    if (cuda::cublaslt_algo_precise(peer.algo(), s.out)) {
      EXPECT_TRUE(ends_with) << what << ": tc ran " << instance << ", a direct caller gets" << tag;
      same += ends_with;
    } else {
      EXPECT_FALSE(ends_with) << what << ": tc ran the direct caller's " << tag
                              << ", which rounds split-K partial sums to " << tc_dtype_name(s.out);
    }
    RecordProperty(what, instance + " / direct" + tag);
  }
  EXPECT_GT(same, 0);
#endif
}

}  // namespace
}  // namespace tc::test
