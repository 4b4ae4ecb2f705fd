// The CPU kernels' thread pool (src/cpu/thread_pool.cpp, compiled into this test: the library
// hides it). What a kernel relies on: every index of [0, n) is handed out exactly once, in
// near-equal contiguous chunks, no more than thread_count() and ceil(n / grain) of them
// (thread_pool.h; this test first found that header promising chunks of at least `grain`,
// which equal splits do not give), whichever `After` a job asks for and
// whether the workers were polling or asleep; jobs back to back never see a chunk of another
// job (the claims carry the job's generation); calls from several threads at once, and nested
// calls, run inline instead of deadlocking.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "cpu/thread_pool.h"

namespace {

using tc::cpu::After;
using tc::cpu::parallel_for;

// Runs one job over [0, n) and checks that each index was visited once, by at most
// min(thread_count(), ceil(n / grain)) chunks whose sizes differ by at most one.
void expect_each_index_once(int64_t n, int64_t grain, After after) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::atomic<int> chunks{0};
  std::atomic<int64_t> smallest{n}, largest{0};
  parallel_for(
      n, grain,
      [&](int64_t b, int64_t e) {
        chunks.fetch_add(1);
        int64_t v = smallest.load();
        while (e - b < v && !smallest.compare_exchange_weak(v, e - b)) {
        }
        v = largest.load();
        while (e - b > v && !largest.compare_exchange_weak(v, e - b)) {
        }
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      },
      after);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of n " << n;
  const int64_t most = std::min<int64_t>(tc::cpu::thread_count(), (n + grain - 1) / grain);
  EXPECT_LE(chunks.load(), most) << "n " << n << " grain " << grain;
  EXPECT_LE(largest.load() - smallest.load(), 1) << "n " << n << " grain " << grain;
}

TEST(ThreadPool, EveryIndexOnceForOddSizesGrainsAndBothAfterModes) {
  ASSERT_GE(tc::cpu::thread_count(), 1);
  for (After after : {After::kSleep, After::kLinger})
    for (int64_t n : {1, 2, 3, 7, 31, 64, 1000, 4099})
      for (int64_t grain : {1, 4, 16, 5000}) expect_each_index_once(n, grain, after);
}

TEST(ThreadPool, EmptyRangeCallsNothing) {
  bool called = false;
  parallel_for(0, 1, [&](int64_t, int64_t) { called = true; });
  parallel_for(-3, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

// Spins for about `us` microseconds: chunks long enough that a woken worker claims some of them
// (a futex wake-up takes 5-50 us here; shorter jobs are done by the caller alone).
void busy_us(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

// Thousands of jobs back to back, alternating polling and sleeping workers: each job writes its
// own number into its own slots, so a chunk run with another job's function or bounds (the race
// the generation in each claim prevents) leaves a wrong or missing mark. Chunks take ~20 us, so
// the workers take part (checked: some chunks run off the caller's thread).
TEST(ThreadPool, BackToBackJobsNeverMixChunks) {
  constexpr int kJobs = 2000;
  constexpr int64_t kN = 16;
  std::vector<int> marks(static_cast<size_t>(kN), -1);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> off_caller{0};
  for (int job = 0; job < kJobs; ++job) {
    const int64_t n = 2 + job % (kN - 1);  // sizes change from job to job
    parallel_for(
        n, 1,
        [&, job](int64_t b, int64_t e) {
          if (std::this_thread::get_id() != caller) off_caller.fetch_add(1);
          busy_us(20);
          for (int64_t i = b; i < e; ++i) marks[static_cast<size_t>(i)] = job;
        },
        job % 3 == 0 ? After::kSleep : After::kLinger);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(marks[static_cast<size_t>(i)], job) << "job " << job << " index " << i;
  }
  if (tc::cpu::thread_count() > 1) {
    EXPECT_GT(off_caller.load(), 0);
  }
}

// Callers on several threads share the one pool: a call that finds it busy runs inline. Each
// caller's sums must come out right, and nothing may hang (ctest's timeout would say so).
TEST(ThreadPool, ConcurrentAndNestedCallersGetTheirOwnResults) {
  constexpr int kThreads = 4, kRounds = 200;
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const int64_t n = 100 + 37 * t + r;
        std::atomic<int64_t> sum{0};
        parallel_for(
            n, 8,
            [&](int64_t b, int64_t e) {
              // A nested call from inside a chunk runs inline.
              std::atomic<int64_t> inner{0};
              parallel_for(e - b, 1, [&](int64_t ib, int64_t ie) { inner.fetch_add(ie - ib); });
              if (inner.load() != e - b) wrong.fetch_add(1);
              for (int64_t i = b; i < e; ++i) sum.fetch_add(i);
            },
            r % 2 ? After::kLinger : After::kSleep);
        if (sum.load() != n * (n - 1) / 2) wrong.fetch_add(1);
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
