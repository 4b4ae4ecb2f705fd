// core/knobs.h: the per-thread knob cache follows the environment by itself (setenv / unsetenv
// between reads, no reload call), keeps getenv's answers (an empty value is not "unset"), and
// inside a Scope reads the environment once, at the first use.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <thread>

#include "core/knobs.h"

namespace tc::knobs {
namespace {

constexpr Id kKnob = kWgmmaSwap;  // TC_WGMMA_SWAP

class Knobs : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv(kNames[kKnob]); }
  void TearDown() override { unsetenv(kNames[kKnob]); }
};

TEST_F(Knobs, FollowsSetenvAndUnsetenvBetweenReads) {
  EXPECT_EQ(get(kKnob), nullptr);
  setenv(kNames[kKnob], "1", 1);
  ASSERT_NE(get(kKnob), nullptr);
  EXPECT_STREQ(get(kKnob), "1");
  EXPECT_TRUE(is(kKnob, "1"));
  setenv(kNames[kKnob], "0", 1);  // overwrite in place: the entry's address changes
  EXPECT_STREQ(get(kKnob), "0");
  EXPECT_FALSE(is(kKnob, "1"));
  setenv(kNames[kKnob], "1", 1);  // back to an earlier value
  EXPECT_STREQ(get(kKnob), "1");
  unsetenv(kNames[kKnob]);
  EXPECT_EQ(get(kKnob), nullptr);
  EXPECT_FALSE(is(kKnob, "1"));
}

TEST_F(Knobs, EmptyValueIsSetAsGetenvHasIt) {
  setenv(kNames[kKnob], "", 1);
  ASSERT_NE(get(kKnob), nullptr);
  EXPECT_STREQ(get(kKnob), "");
}

TEST_F(Knobs, EveryKnobMatchesGetenv) {
  setenv("TC_GEMM_PDL", "0", 1);
  setenv("TC_WGMMA_EPILOGUE", "direct", 1);
  for (int i = 0; i < kCount; ++i) {
    const char* want = getenv(kNames[i]);
    const char* got = get(Id(i));
    EXPECT_EQ(want == nullptr, got == nullptr) << kNames[i];
    if (want && got) {
      EXPECT_STREQ(want, got) << kNames[i];
    }
  }
  EXPECT_TRUE(is(kGemmPdl, "0"));
  EXPECT_TRUE(is(kWgmmaEpilogue, "direct"));
  unsetenv("TC_GEMM_PDL");
  unsetenv("TC_WGMMA_EPILOGUE");
  EXPECT_FALSE(is(kGemmPdl, "0"));
}

TEST_F(Knobs, StampChangesWithAnyTcVariableAndNoOther) {
  const uint64_t s0 = stamp();
  EXPECT_NE(s0, 0u);
  EXPECT_EQ(stamp(), s0);
  setenv("TC_KNOBS_TEST_OTHER", "x", 1);  // not a knob: plans keyed by the stamp replan too
  const uint64_t s1 = stamp();
  EXPECT_NE(s1, s0);
  setenv("TC_KNOBS_TEST_OTHER", "y", 1);
  EXPECT_NE(stamp(), s1);
  unsetenv("TC_KNOBS_TEST_OTHER");
  EXPECT_NE(stamp(), s1);
  // Variables outside TC_* (and HOME / XDG_CACHE_HOME) leave it alone: the dispatch memo and the
  // plan caches keep their decisions when an application sets its own environment.
  const uint64_t s2 = stamp();
  setenv("KNOBS_TEST_UNRELATED", "x", 1);
  EXPECT_EQ(stamp(), s2);
  unsetenv("KNOBS_TEST_UNRELATED");
  EXPECT_EQ(stamp(), s2);
}

TEST_F(Knobs, ScopeReadsTheEnvironmentOnceAtFirstUse) {
  {
    const Scope scope;
    setenv(kNames[kKnob], "1", 1);  // before the first use: seen
    EXPECT_STREQ(get(kKnob), "1");
    const uint64_t s = stamp();
    setenv(kNames[kKnob], "0", 1);  // inside the scope after the first use: not seen (documented)
    EXPECT_STREQ(get(kKnob), "1");
    EXPECT_EQ(stamp(), s);
    {
      const Scope nested;  // a nested scope does not refresh
      EXPECT_STREQ(get(kKnob), "1");
    }
  }
  EXPECT_STREQ(get(kKnob), "0");  // outside: every read checks
  {
    const Scope again;  // a new outermost scope checks at its first use
    unsetenv(kNames[kKnob]);
    EXPECT_EQ(get(kKnob), nullptr);
  }
}

TEST_F(Knobs, EachThreadHasItsOwnCache) {
  setenv(kNames[kKnob], "1", 1);
  EXPECT_STREQ(get(kKnob), "1");
  std::string seen;
  std::thread([&] {
    const Scope scope;
    const char* v = get(kKnob);
    seen = v ? v : "(unset)";
  }).join();
  EXPECT_EQ(seen, "1");
}

}  // namespace
}  // namespace tc::knobs
