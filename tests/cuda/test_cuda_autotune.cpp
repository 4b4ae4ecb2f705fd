// The autotuner on the GPU: the first call of a class writes the winner to TC_AUTOTUNE_CACHE
// (and the call reports that row), a cache file naming another row is obeyed by a later call,
// and TC_AUTOTUNE=0 takes the static ladder and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/backends.h"
#include "core/autotune.h"
#include "cuda_test_util.h"

namespace tc::test {
namespace {

class CudaAutotune : public ::testing::Test {
 protected:
  void SetUp() override { TC_CONTEXT_OR_SKIP(g_, TC_DEVICE_CUDA); }
  ContextGuard g_;
  TempDir dir_;
  ScopedEnv no_force_{"TC_GEMM_ROW", nullptr};
  ScopedEnv tune_on_{"TC_AUTOTUNE", nullptr};
};

// A shape class no other test in this process uses.
tc_gemm_desc bf16_desc() {
  return {333,
          4000,
          900,
          TC_DTYPE_BF16,
          TC_DTYPE_BF16,
          TC_DTYPE_BF16,
          TC_DTYPE_F32,
          false,
          true,
          1.0f,
          0.0f,
          0,
          0,
          0};
}

TEST_F(CudaAutotune, FirstCallStoresTheWinnerAndACacheFileIsObeyed) {
  const std::string first = dir_.path() + "/first.json";
  const GemmInputs in = make_inputs(bf16_desc(), 1, 5);
  std::map<std::string, autotune::Entry> entries;
  {
    ScopedEnv cache("TC_AUTOTUNE_CACHE", first.c_str());
    RunResult r = run_gemm_bytes(g_.ctx, in);
    ASSERT_EQ(r.status, TC_SUCCESS) << r.message;
    ASSERT_TRUE(std::filesystem::exists(first)) << "no cache file written";
    ASSERT_TRUE(autotune::parse(read_text(first), &entries)) << read_text(first);
    ASSERT_EQ(entries.size(), 1u);
    const auto& [key, e] = *entries.begin();
    tc_device_info info;
    tc_context_device_info(g_.ctx, &info);
    EXPECT_NE(key.find(info.name), std::string::npos) << key;
    EXPECT_NE(key.find(tc_version_string()), std::string::npos) << key;
    EXPECT_NE(key.find("bf16,bf16->bf16"), std::string::npos) << key;
    EXPECT_GT(e.ms, 0.0);
    // What ran is the stored row (own rows report their planned instance, named after the row).
    EXPECT_EQ(r.instance.rfind(e.row, 0), 0u) << r.instance << " vs " << e.row;
    // A second call of the same class reads the entry: no new entries, same instance.
    RunResult r2 = run_gemm_bytes(g_.ctx, in);
    ASSERT_EQ(r2.status, TC_SUCCESS);
    EXPECT_EQ(r2.instance, r.instance);
    EXPECT_TRUE(r2.c == r.c);
  }
  // Another process's file that names a different row: the call obeys it.
  auto& e = entries.begin()->second;
  const bool was_cublas = e.row.rfind("gemm_cublaslt", 0) == 0;
  e.row = was_cublas ? "gemm_mma" : "gemm_cublaslt_bf16";
  e.variant = 0;
  const std::string second = dir_.path() + "/second.json";
  write_text(second, autotune::serialize(entries));
  ScopedEnv cache("TC_AUTOTUNE_CACHE", second.c_str());
  RunResult r3 = run_gemm_bytes(g_.ctx, in);
  ASSERT_EQ(r3.status, TC_SUCCESS) << r3.message;
  EXPECT_EQ(r3.instance.rfind(e.row, 0), 0u) << "ran " << r3.instance << ", cache says " << e.row;
  EXPECT_EQ(r3.backend, was_cublas ? TC_BACKEND_CUDA : TC_BACKEND_CUBLASLT);
}

TEST_F(CudaAutotune, DisabledUsesTheLadderAndWritesNothing) {
  const std::string path = dir_.path() + "/never.json";
  ScopedEnv cache("TC_AUTOTUNE_CACHE", path.c_str());
  ScopedEnv off("TC_AUTOTUNE", "0");
  tc_gemm_desc d = bf16_desc();
  d.M = 517;  // another class than the test above
  const GemmInputs in = make_inputs(d, 1, 6);
  RunResult r = run_gemm_bytes(g_.ctx, in);
  ASSERT_EQ(r.status, TC_SUCCESS) << r.message;
  EXPECT_FALSE(std::filesystem::exists(path));
  // The ladder puts own kernels first: on a GPU where one serves bf16, it runs.
  tc_device_info info;
  tc_context_device_info(g_.ctx, &info);
  if (info.cc_major == 9 && info.cc_minor == 0) {
    EXPECT_EQ(r.backend, TC_BACKEND_CUDA) << r.instance;
    EXPECT_EQ(r.instance.rfind("gemm_wgmma", 0), 0u) << r.instance;
  }
  // Deterministic: the ladder gives the same bytes again.
  RunResult r2 = run_gemm_bytes(g_.ctx, in);
  EXPECT_TRUE(r2.c == r.c);
}

}  // namespace
}  // namespace tc::test
