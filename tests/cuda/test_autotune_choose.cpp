// The tuner's decision over timed candidates (autotune::choose), with scripted timings: near
// ties timed again in reverse order and averaged, the ladder rule (a later candidate must be more
// than 1% faster), and the reference, cuBLASLt's variant 0 (the direct caller's algorithm),
// kept unless the ladder's pick is more than 5% faster than it, and a pick that was timed once
// confirmed by a second timing before it replaces the reference. No GPU.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/autotune.h"

namespace tc {
namespace {

tc_status_t no_op(const GemmProblem&) {
  return TC_SUCCESS;
}
bool any(const GemmProblem&, std::string&) {
  return true;
}
const GemmRow kOwn{TC_BACKEND_CUDA, "own", any, no_op};
const GemmRow kLt{TC_BACKEND_CUBLASLT, "lt", any, no_op};
const GemmRow kLt2{TC_BACKEND_CUBLASLT, "lt2", any, no_op};

struct Script {
  std::map<std::string, double> again;  // second timings ("row#variant"); absent: 1e9
  std::vector<std::string> retimed;
  std::string operator()(std::vector<autotune::Timed> cands) {
    auto retime = [&](const autotune::Timed& c) {
      const std::string id = std::string(c.row->name) + "#" + std::to_string(c.variant);
      retimed.push_back(id);
      auto it = again.find(id);
      return it == again.end() ? 1e9 : it->second;
    };
    const int w = autotune::choose(cands, retime, nullptr);
    if (w < 0) return "none";
    return std::string(cands[size_t(w)].row->name) + "#" + std::to_string(cands[size_t(w)].variant);
  }
};

TEST(AutotuneChoose, ReferenceKeptUnlessTheLaddersPickIsMoreThanFivePercentFaster) {
  // Own kernels come first in the ladder; lt#0 is the direct caller's algorithm.
  Script s;
  s.again = {{"own#0", 0.96}, {"lt#0", 1.00}, {"lt#1", 0.96}};
  EXPECT_EQ(s({{&kOwn, 0, 0.96}, {&kLt, 0, 1.00}, {&kLt, 1, 0.96}}), "lt#0");
  s.again = {{"own#0", 0.94}, {"lt#0", 1.00}, {"lt#1", 0.96}};
  EXPECT_EQ(s({{&kOwn, 0, 0.94}, {&kLt, 0, 1.00}, {&kLt, 1, 0.96}}), "own#0");
  s.again = {{"own#0", 1.10}, {"lt#0", 1.00}, {"lt#1", 0.94}};
  EXPECT_EQ(s({{&kOwn, 0, 1.10}, {&kLt, 0, 1.00}, {&kLt, 1, 0.94}}), "lt#1");
  // The reference is the first cuBLASLt row's variant 0, not a later row's.
  s.again = {{"lt#0", 1.00}, {"lt#1", 0.97}, {"lt2#0", 0.97}};
  EXPECT_EQ(s({{&kLt, 0, 1.00}, {&kLt, 1, 0.97}, {&kLt2, 0, 0.97}}), "lt#0");
}

TEST(AutotuneChoose, WithoutAReferenceAnEarlierCandidateKeepsItsPlaceWithinOnePercent) {
  Script s;
  s.again = {{"own#0", 1.000}, {"own#1", 0.995}};
  EXPECT_EQ(s({{&kOwn, 0, 1.000}, {&kOwn, 1, 0.995}}), "own#0");
  s.again = {{"own#0", 1.00}, {"own#1", 0.98}};
  EXPECT_EQ(s({{&kOwn, 0, 1.00}, {&kOwn, 1, 0.98}}), "own#1");
  EXPECT_EQ(s({}), "none");
  EXPECT_EQ(s({{&kLt, 2, 1.0}}), "lt#2");
}

TEST(AutotuneChoose, NearTiesAndANearReferenceAreTimedAgainInReverseOrderAndAveraged) {
  // First pass: lt#1 looks 7% faster than the reference; the second pass finds it 7% slower:
  // the means (1.00 and 1.00) keep the reference. own (11% slower than the fastest) and lt#2
  // (4%, not the reference) are not timed again; the reference (7.5%) is.
  Script s;
  s.again = {{"lt#0", 1.00}, {"lt#1", 1.07}};
  const std::vector<autotune::Timed> c = {
      {&kOwn, 0, 1.03}, {&kLt, 0, 1.00}, {&kLt, 1, 0.93}, {&kLt, 2, 0.97}};
  EXPECT_EQ(s(c), "lt#0");
  EXPECT_EQ(s.retimed, (std::vector<std::string>{"lt#1", "lt#0"}));
  // A failed second timing keeps the first.
  s.retimed.clear();
  s.again = {{"own#0", -1.0}, {"lt#0", 1.00}};
  EXPECT_EQ(s({{&kOwn, 0, 0.90}, {&kLt, 0, 0.93}}), "own#0");
  EXPECT_EQ(s.retimed, (std::vector<std::string>{"lt#0", "own#0"}));
}

TEST(AutotuneChoose, ALoneFastPickMustBeatTheReferenceAgain) {
  // own#0 is far ahead of everything (no near tie, so step 1 times nothing again): it is timed
  // once more and keeps its place only if that timing also beats the reference by 5%.
  Script s;
  s.again = {{"own#0", 1.02}};
  EXPECT_EQ(s({{&kOwn, 0, 0.50}, {&kLt, 0, 1.00}, {&kLt, 1, 1.20}}), "lt#0");
  EXPECT_EQ(s.retimed, (std::vector<std::string>{"own#0"}));
  s.retimed.clear();
  s.again = {{"own#0", 0.60}};
  EXPECT_EQ(s({{&kOwn, 0, 0.50}, {&kLt, 0, 1.00}, {&kLt, 1, 1.20}}), "own#0");
  EXPECT_EQ(s.retimed, (std::vector<std::string>{"own#0"}));
  // Just inside the margin on the second timing is not enough; a failed timing keeps the first.
  s.again = {{"own#0", 0.951}};
  EXPECT_EQ(s({{&kOwn, 0, 0.50}, {&kLt, 0, 1.00}}), "lt#0");
  s.again = {{"own#0", -1.0}};
  EXPECT_EQ(s({{&kOwn, 0, 0.50}, {&kLt, 0, 1.00}}), "own#0");
  // The reference itself, or a pick without a reference, needs no confirmation.
  s.retimed.clear();
  EXPECT_EQ(s({{&kOwn, 0, 1.50}, {&kLt, 0, 1.00}}), "lt#0");
  EXPECT_EQ(s({{&kOwn, 0, 0.50}, {&kOwn, 1, 1.00}}), "own#0");
  EXPECT_TRUE(s.retimed.empty());
}

}  // namespace
}  // namespace tc
