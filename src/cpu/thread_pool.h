// A small persistent thread pool for the CPU kernels (one worker per hardware thread, the
// caller included). One parallel_for runs at a time; a call made while the pool is busy (from
// another thread sharing a context, or nested) runs inline, so callers never deadlock.
#pragma once

#include <cstdint>
#include <functional>

namespace tc::cpu {

// Calls fn(begin, end) over [0, n) split into contiguous chunks of at least `grain`.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
int thread_count();

}  // namespace tc::cpu
