// A small persistent thread pool for the CPU kernels (one worker per hardware thread, the
// caller included). One parallel_for runs at a time; a call made while the pool is busy (from
// another thread sharing a context, or nested) runs inline, so callers never deadlock.
#pragma once

#include <cstdint>
#include <functional>

namespace tc::cpu {

// After a job the workers either sleep at once (kSleep) or first poll for the next job for a
// while (kLinger: for calls that come back to back, like a decode step's GEMVs, where a
// futex wake-up is a large part of a call). Not for jobs followed by other threaded work
// (OpenBLAS right after a conversion pass): the pollers would take its cores.
enum class After { kSleep, kLinger };

// Calls fn(begin, end) over [0, n) split into contiguous, near-equal chunks (sizes differ by at
// most one): at most thread_count() of them and at most ceil(n / grain), so `grain` bounds how
// finely n is cut, not each chunk's size.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                  After after = After::kSleep);
int thread_count();

}  // namespace tc::cpu
