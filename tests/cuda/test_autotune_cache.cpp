// The autotune cache's file format and keys (src/core/autotune.cpp, compiled into this test):
// round trips, malformed files (ignored entry by entry, never a crash), the key's contents, the
// default location, and the atomic rewrite that merges what another process stored meanwhile.
// No GPU needed.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/autotune.h"
#include "cuda_test_util.h"

namespace tc::test {
namespace {

using tc::autotune::Entry;

TEST(AutotuneCache, SerializeParseRoundTrip) {
  std::map<std::string, Entry> in = {
      {"k1", {"gemm_wgmma", 3, 0.25, " gemm_wgmma#3=0.2500ms gemm_cublaslt_bf16#0=-1.0000ms"}},
      {"k \"2\"", {"gemm_cublaslt_bf16", 1, 1.5}}};
  std::map<std::string, Entry> out;
  ASSERT_TRUE(autotune::parse(autotune::serialize(in), &out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out["k1"].row, "gemm_wgmma");
  EXPECT_EQ(out["k1"].variant, 3);
  EXPECT_DOUBLE_EQ(out["k1"].ms, 0.25);
  EXPECT_EQ(out["k1"].timings, in["k1"].timings);  // the tuning's candidate times, kept
  EXPECT_EQ(out["k \"2\""].row, "gemm_cublaslt_bf16");
  EXPECT_EQ(out["k \"2\""].timings, "");
  const std::map<std::string, Entry> bare = {{"k", {"gemm_wgmma", 0, 1.0}}};
  EXPECT_EQ(autotune::serialize(bare).find("timings"), std::string::npos)
      << "an entry without timings writes no timings field";
}

TEST(AutotuneCache, MalformedTextIsRejectedNotFatal) {
  std::map<std::string, Entry> out;
  EXPECT_FALSE(autotune::parse("", &out));
  EXPECT_FALSE(autotune::parse("{\"format\": 1, \"entries\": ", &out));
  EXPECT_FALSE(autotune::parse("[1, 2, 3]", &out));
  EXPECT_FALSE(autotune::parse("{\"format\": 1, \"entries\": []}", &out));
  EXPECT_TRUE(out.empty());
  // Good entries survive beside bad ones; the text as a whole is reported as malformed.
  EXPECT_FALSE(autotune::parse(
      R"({"format": 1, "entries": {"good": {"row": "r", "variant": 0},
          "no_row": {"variant": 1}, "neg": {"row": "r", "variant": -2},
          "str": {"row": "r", "variant": "1"}}})",
      &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.begin()->first, "good");
  // An unknown format version is not trusted blindly either.
  out.clear();
  EXPECT_FALSE(autotune::parse(R"({"format": 7, "entries": {}})", &out));
}

TEST(AutotuneCache, KeyNamesDtypesTransposesClassAlignmentDeviceAndVersion) {
  GemmProblem p;
  p.d = tc_gemm_desc{1000, 4097,  96,   TC_DTYPE_BF16, TC_DTYPE_BF16, TC_DTYPE_F32, TC_DTYPE_F32,
                     true, false, 1.0f, 0.0f,          1000,          4097,         4097};
  alignas(256) static char buf[64];
  p.a = buf;
  p.b = buf;
  p.c = buf + 4;
  const std::string k = autotune::gemm_key(p, "GPU-X sm_90 132 SMs");
  EXPECT_NE(k.find("bf16,bf16->f32"), std::string::npos) << k;
  EXPECT_NE(k.find("TN"), std::string::npos) << k;
  // M and N beyond 64 with a partial last 128-wide tile are marked "+" (classed apart).
  EXPECT_NE(k.find("m1024+ n8192+ k128"), std::string::npos) << k;
  // lda = 1000 bf16 = 2000 bytes (16-aligned); ldb = 4097 bf16 is not; C is offset by 4 bytes.
  EXPECT_NE(k.find(" a-- "), std::string::npos) << k;
  EXPECT_NE(k.find("GPU-X sm_90 132 SMs"), std::string::npos) << k;
  EXPECT_NE(k.find(tc_version_string()), std::string::npos) << k;
  EXPECT_NE(k.find(" cand 2"), std::string::npos) << k;  // the candidate lists' revision
  // Same class: sizes inside the same powers of two (beyond 64) share the key; a transpose does
  // not; sizes up to 32 are classed exactly, up to 64 by multiples of 8.
  GemmProblem q = p;
  q.d.M = 1020;
  q.d.N = 5000;
  EXPECT_EQ(autotune::gemm_key(q, "GPU-X sm_90 132 SMs"), k);
  GemmProblem full = q;  // whole tiles: 1024 x 4096 is another class than 1000 x 4097
  full.d.M = 1024;
  EXPECT_NE(autotune::gemm_key(full, "GPU-X sm_90 132 SMs").find("m1024 n8192+ "),
            std::string::npos)
      << autotune::gemm_key(full, "GPU-X sm_90 132 SMs");
  full.d.N = 4096;
  EXPECT_NE(autotune::gemm_key(full, "GPU-X sm_90 132 SMs").find("m1024 n4096 "), std::string::npos)
      << autotune::gemm_key(full, "GPU-X sm_90 132 SMs");
  q.d.transpose_b = true;
  EXPECT_NE(autotune::gemm_key(q, "GPU-X sm_90 132 SMs"), k);
  EXPECT_NE(autotune::gemm_key(p, "GPU-Y sm_90 132 SMs"), k);
  GemmProblem small = p;
  small.d.M = 17;
  EXPECT_NE(autotune::gemm_key(small, "d").find("m17 "), std::string::npos);
  small.d.M = 33;
  EXPECT_NE(autotune::gemm_key(small, "d").find("m40 "), std::string::npos);
  small.d.M = 1;
  EXPECT_NE(autotune::gemm_key(small, "d").find("m1 "), std::string::npos);
}

TEST(AutotuneCache, DefaultLocationFollowsXdgThenHome) {
  ScopedEnv no_override("TC_AUTOTUNE_CACHE", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(autotune::cache_path(), "/x/cache/tc/autotune.json");
  }
  ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(autotune::cache_path(), "/home/someone/.cache/tc/autotune.json");
  ScopedEnv explicit_path("TC_AUTOTUNE_CACHE", "/tmp/x.json");
  EXPECT_EQ(autotune::cache_path(), "/tmp/x.json");
}

TEST(AutotuneCache, KnobDisables) {
  {
    ScopedEnv off("TC_AUTOTUNE", "0");
    EXPECT_FALSE(autotune::enabled());
  }
  ScopedEnv on("TC_AUTOTUNE", "1");
  EXPECT_TRUE(autotune::enabled());
}

TEST(AutotuneCache, StoreWritesAtomicallyAndMergesOtherWriters) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.path() + "/sub/folder/autotune.json";  // folders are created
  ScopedEnv env("TC_AUTOTUNE_CACHE", path.c_str());
  autotune::store("mine", {"gemm_a", 1, 0.5});
  std::map<std::string, Entry> on_disk;
  ASSERT_TRUE(autotune::parse(read_text(path), &on_disk));
  ASSERT_EQ(on_disk.count("mine"), 1u);
  // Another process adds an entry; our next store keeps it.
  on_disk["theirs"] = {"gemm_b", 0, 2.0};
  write_text(path, autotune::serialize(on_disk));
  autotune::store("mine2", {"gemm_c", 0, 1.0});
  on_disk.clear();
  ASSERT_TRUE(autotune::parse(read_text(path), &on_disk));
  EXPECT_EQ(on_disk.size(), 3u);
  EXPECT_EQ(on_disk["theirs"].row, "gemm_b");
  // No temporary files are left behind.
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path() + "/sub/folder")) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
  // Lookups of a file that changed under another TC_AUTOTUNE_CACHE value reload it.
  const std::string other = dir.path() + "/other.json";
  write_text(other, autotune::serialize({{"only_here", {"gemm_z", 2, 1.0}}}));
  ScopedEnv env2("TC_AUTOTUNE_CACHE", other.c_str());
  auto e = autotune::lookup("only_here");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->variant, 2);
  EXPECT_FALSE(autotune::lookup("mine").has_value());
}

TEST(AutotuneCache, PerCallLookupSeesStoresAndLocationChanges) {
  TempDir dir;
  const std::string one = dir.path() + "/one.json", two = dir.path() + "/two.json";
  GemmProblem p;
  p.d = tc_gemm_desc{64,    64,   64,   TC_DTYPE_F16, TC_DTYPE_F16, TC_DTYPE_F16, TC_DTYPE_F32,
                     false, true, 1.0f, 0.0f,         64,           64,           64};
  alignas(256) static char buf[64];
  p.a = p.b = p.c = buf;
  ScopedEnv env("TC_AUTOTUNE_CACHE", one.c_str());
  EXPECT_FALSE(autotune::lookup(p, "dev").has_value());  // remembered as "no entry" ...
  autotune::store(p, "dev", {"gemm_x", 2, 1.0});         // ... until a store
  auto hit = autotune::lookup(p, "dev");
  ASSERT_TRUE(hit.has_value());
  EXPECT_STREQ(hit->row, "gemm_x");
  EXPECT_EQ(hit->variant, 2);
  EXPECT_FALSE(autotune::lookup(p, "other device").has_value());
  GemmProblem q = p;
  q.d.K = 65;  // another class (k128)
  EXPECT_FALSE(autotune::lookup(q, "dev").has_value());
  q = p;
  q.d.N = 60;  // same class (n64)
  EXPECT_TRUE(autotune::lookup(q, "dev").has_value());
  q = p;
  q.d.M = 57;  // same class (m64)
  EXPECT_TRUE(autotune::lookup(q, "dev").has_value());
  // Up to 32 every M is its own class (decode batches: the best kernel changes within a few rows).
  q = p;
  q.d.M = 16;
  autotune::store(q, "dev", {"gemm_m16", 0, 1.0});
  q.d.M = 13;
  EXPECT_FALSE(autotune::lookup(q, "dev").has_value());
  q.d.M = 16;
  ASSERT_TRUE(autotune::lookup(q, "dev").has_value());
  EXPECT_STREQ(autotune::lookup(q, "dev")->row, "gemm_m16");
  EXPECT_NE(autotune::gemm_key(q, "dev").find(" m16 "), std::string::npos)
      << autotune::gemm_key(q, "dev");
  // Another file: the memo does not answer from the old one.
  write_text(two, autotune::serialize({{autotune::gemm_key(p, "dev"), {"gemm_y", 0, 1.0}}}));
  ScopedEnv env2("TC_AUTOTUNE_CACHE", two.c_str());
  hit = autotune::lookup(p, "dev");
  ASSERT_TRUE(hit.has_value());
  EXPECT_STREQ(hit->row, "gemm_y");
}

TEST(AutotuneCache, UnwritableLocationIsNotAnError) {
  ScopedEnv env("TC_AUTOTUNE_CACHE", "/proc/definitely/not/writable/autotune.json");
  autotune::store("k", {"gemm_a", 0, 1.0});  // logged under TC_LOG=debug, no throw, no crash
  auto e = autotune::lookup("k");            // still remembered in memory
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->row, "gemm_a");
}

}  // namespace
}  // namespace tc::test
