// Golden text of every IR level (tile IR, GPU plan, CUDA C++, AOT C++) and the inlining equivalence
// of spec §5. Regenerate with PHOBOS_UPDATE_GOLDEN=1 after an intended change, and review the diff.
#include <gtest/gtest.h>

#include "phobos/phobos.h"
#include "util.h"

using phobos_test::check_golden;
using phobos_test::example;

namespace {

struct Case {
  const char* file;
  const char* kernel;
  std::map<std::string, int64_t> params;
  const char* golden;  // base name
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"sgemm.ph", "sgemm", {{"TILE_M", 32}, {"TILE_N", 32}, {"TILE_K", 4}, {"T", 256}}, "sgemm"},
      {"sgemm.ph", "hgemm", {}, "hgemm"},
      {"linear_gelu.ph",
       "linear_gelu",
       {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"T", 128}},
       "linear_gelu"},
      {"ragged.ph",
       "sgemm_ragged",
       {{"TILE_M", 64}, {"TILE_N", 32}, {"TILE_K", 8}, {"T", 128}},
       "sgemm_ragged"},
      {"bench.ph", "hgemm_big", {{"BM", 128}, {"BN", 256}, {"BK", 64}, {"T", 256}}, "hgemm_wgmma"},
  };
  return c;
}

}  // namespace

TEST(PhobosGolden, TileIr) {
  for (auto& c : cases()) {
    auto k = phobos::compile(example(c.file), c.file).kernel(c.kernel);
    std::string err = check_golden(std::string(c.golden) + ".ir", k.ir(c.params));
    EXPECT_TRUE(err.empty()) << err;
  }
}

TEST(PhobosGolden, GpuPlan) {
  for (auto& c : cases()) {
    auto k = phobos::compile(example(c.file), c.file).kernel(c.kernel);
    std::string err = check_golden(std::string(c.golden) + ".plan", k.plan(c.params));
    EXPECT_TRUE(err.empty()) << err;
  }
}

TEST(PhobosGolden, CudaSource) {
  for (auto& c : cases()) {
    auto k = phobos::compile(example(c.file), c.file).kernel(c.kernel);
    std::string err = check_golden(std::string(c.golden) + ".cu", k.cuda_source(c.params));
    EXPECT_TRUE(err.empty()) << err;
  }
}

TEST(PhobosGolden, CppSource) {
  for (auto& c : cases()) {
    auto k = phobos::compile(example(c.file), c.file).kernel(c.kernel);
    std::string err = check_golden(std::string(c.golden) + ".aot", k.cpp_source(c.params));
    EXPECT_TRUE(err.empty()) << err;
  }
}

// Spec §5: sgemm with the matmul call and the same kernel with the loop written out compile to
// the same IR text, for every autotune instance, and to the same CUDA C++.
TEST(PhobosGolden, InliningIsExact) {
  std::string with_call = example("sgemm.ph");
  std::string written_out = phobos_test::read_file(std::string(PHOBOS_TEST_DIR) + "/sgemm_loop.ph");
  auto a = phobos::compile(with_call, "sgemm.ph").kernel("sgemm");
  auto b = phobos::compile(written_out, "sgemm_loop.ph").kernel("sgemm");
  int compared = 0;
  for (int64_t tm : {32, 256})
    for (int64_t tn : {32, 256})
      for (int64_t tk : {4, 32})
        for (int64_t t : {256, 128}) {
          std::map<std::string, int64_t> p = {
              {"TILE_M", tm}, {"TILE_N", tn}, {"TILE_K", tk}, {"T", t}};
          ASSERT_EQ(a.ir(p), b.ir(p));
          ASSERT_EQ(a.plan(p), b.plan(p));
          if (a.plan(p).find("invalid") == std::string::npos) {
            ASSERT_EQ(a.cuda_source(p), b.cuda_source(p));
          }
          ++compared;
        }
  EXPECT_EQ(compared, 16);
  // And the comparison can fail: a different loop body gives different IR.
  std::string changed = written_out;
  std::string from = "kt :+ TILE_K]\n    var b";
  changed.replace(changed.find(from), from.size(), "kt :+ TILE_K] * 2.0\n    var b");
  auto c = phobos::compile(changed, "x.ph").kernel("sgemm");
  std::map<std::string, int64_t> p = {{"TILE_M", 32}, {"TILE_N", 32}, {"TILE_K", 4}, {"T", 256}};
  EXPECT_NE(c.ir(p), a.ir(p));
}
