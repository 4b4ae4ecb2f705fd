// Workers spin for a while after a job that asks for it (After::kLinger) before they sleep, and
// the caller spins for the end of a job before it sleeps: a decode step's GEMVs come back to back
// (a 4096 x 4096 Q4_0 GEMV is ~250 us here), and a futex wake-up costs 5-50 us on this machine
// (measured 2026-11-29: the worker entered a 4096 x 4096 Q4_0 GEMV 8-70 us after the caller, median
// 48; the caller woke 0-53 us after the worker's last row), which is 5-30% of such a call. The GEMM
// rows do not linger: OpenBLAS's threads run right after their conversion passes, and pollers
// slowed f16 GEMMs of 128^3-512^3 by ~5-10% here.
//
// A job is published as a generation, and chunk claims carry it with the job's chunk count
// (next_ = generation << 40 | chunks << 20 | next chunk): a worker that arrives after its job
// ended, when the caller may already be publishing the next one, fails its claim instead of
// running a chunk of the new job with the old job's bounds.
#include "cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TC_POOL_PAUSE() _mm_pause()
#else
#define TC_POOL_PAUSE() ((void)0)
#endif

namespace tc::cpu {
namespace {

using Clock = std::chrono::steady_clock;

// How long a worker polls for the next job and the caller for the end of one before sleeping.
// TC_CPU_POOL_SPIN_US (read once) overrides it; 0 gives the sleep-only pool.
std::chrono::microseconds spin_budget() {
  const char* s = std::getenv("TC_CPU_POOL_SPIN_US");
  return std::chrono::microseconds(s != nullptr ? std::max(0L, std::atol(s)) : 200L);
}

// Polls done() for up to `budget`, reading the clock every 64 polls; true when it became true.
// After the first 20 us each round yields the core: a poller that is not needed soon (the next
// job is not a GEMV right behind this one) then gives way to OpenBLAS's threads, which run
// right after the pool's conversion and dequantization passes in the GEMM rows, and to other
// processes.
template <class F>
bool spin_until(F done, std::chrono::microseconds budget) {
  if (budget.count() == 0) return done();
  const auto start = Clock::now(), end = start + budget,
             polite = start + std::min(budget, std::chrono::microseconds(20));
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      TC_POOL_PAUSE();
    }
    const auto now = Clock::now();
    if (now >= end) return done();
    if (now >= polite) std::this_thread::yield();
  }
}

constexpr uint64_t kFieldMask = (uint64_t{1} << 20) - 1, kGenMask = (uint64_t{1} << 24) - 1;
uint64_t pack(uint64_t gen, int64_t chunks, int64_t c) {
  return (gen & kGenMask) << 40 | static_cast<uint64_t>(chunks) << 20 | static_cast<uint64_t>(c);
}

class Pool {
 public:
  Pool() : spin_(spin_budget()) {
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this] { loop(); });
  }
  ~Pool() {
    {
      std::lock_guard lock(mu_);
      stop_.store(true);
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int size() const { return int(workers_.size()) + 1; }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn, After after) {
    std::unique_lock busy(busy_, std::try_to_lock);
    // (At most size() chunks, far below the 2^20 a claim can count.)
    int64_t chunks = std::min<int64_t>(size(), (n + grain - 1) / grain);
    if (!busy.owns_lock() || chunks <= 1) {
      fn(0, n);
      return;
    }
    uint64_t gen;
    {
      std::lock_guard lock(mu_);
      gen = generation_.load(std::memory_order_relaxed) + 1;
      fn_.store(&fn, std::memory_order_relaxed);
      n_.store(n, std::memory_order_relaxed);
      done_.store(0, std::memory_order_relaxed);
      linger_.store(after == After::kLinger, std::memory_order_relaxed);
      next_.store(pack(gen, chunks, 0), std::memory_order_release);
      generation_.store(gen, std::memory_order_release);
    }
    cv_.notify_all();  // no system call when every worker is spinning
    work(gen);
    const auto all_done = [&] { return done_.load(std::memory_order_acquire) == chunks; };
    if (!spin_until(all_done, spin_)) {
      std::unique_lock lock(mu_);
      done_cv_.wait(lock, all_done);
    }
  }

 private:
  // Claims and runs chunks of job `gen` until none is left or a newer job replaced it.
  void work(uint64_t gen) {
    for (;;) {
      uint64_t v = next_.load(std::memory_order_acquire);
      int64_t c, chunks;
      do {
        if (v >> 40 != (gen & kGenMask)) return;
        chunks = static_cast<int64_t>((v >> 20) & kFieldMask);
        c = static_cast<int64_t>(v & kFieldMask);
        if (c >= chunks) return;
      } while (!next_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel));
      // The claim succeeded for `gen` with a chunk below its count, so the job is still open
      // (its caller waits for this chunk) and fn_ and n_ are the ones published with it.
      const int64_t n = n_.load(std::memory_order_relaxed);
      (*fn_.load(std::memory_order_relaxed))(n * c / chunks, n * (c + 1) / chunks);
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
        std::lock_guard lock(mu_);  // the caller may be between its check and its wait
        done_cv_.notify_all();
      }
    }
  }
  void loop() {
    uint64_t seen = 0;
    for (;;) {
      const auto fresh = [&] {
        return stop_.load(std::memory_order_acquire) ||
               generation_.load(std::memory_order_acquire) != seen;
      };
      const auto budget =
          linger_.load(std::memory_order_relaxed) ? spin_ : std::chrono::microseconds(0);
      if (!spin_until(fresh, budget)) {
        std::unique_lock lock(mu_);
        cv_.wait(lock, fresh);
      }
      if (stop_.load(std::memory_order_acquire)) return;
      seen = generation_.load(std::memory_order_acquire);
      work(seen);
    }
  }

  const std::chrono::microseconds spin_;
  std::vector<std::thread> workers_;
  std::mutex busy_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::atomic<const std::function<void(int64_t, int64_t)>*> fn_{nullptr};
  std::atomic<int64_t> n_{0}, done_{0};
  std::atomic<uint64_t> next_{0}, generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> linger_{false};  // the last job's After::kLinger
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                  After after) {
  if (n <= 0) return;
  pool().run(n, std::max<int64_t>(grain, 1), fn, after);
}

int thread_count() {
  return pool().size();
}

}  // namespace tc::cpu
