// Decode GEMV with 8-bit activations, AVX2: Q4_0 x Q8, Q8_0 x Q8 and Q4_K x Q8 (spec §1.10).
// One driver for the three formats: per weight row, each group of 256 weights is read from the
// GGUF bytes once (the format's unit, gemv_q8_units.h, unpacks it into registers) and dotted
// with every activation row, M <= 8. Activations are quantized per 32 values, also for Q4_K:
// ggml's 256-value Q8_K scale gives the same error on U(-1,1) activations but +26% on Gaussian
// and 2x on heavy-tailed (Student t, 3 dof) ones (K = 4096, numpy). The kernels keep the
// weights as stored (no repack). A row's last group, when K is not a multiple of 256, is
// copied into a zeroed buffer first (its activations are zero-padded), so the loop never
// branches on tails.
// Rows of W are claimed by the pool's threads in pieces, largest first (each thread writes
// disjoint columns of Y), and X is quantized by the first thread to arrive while the others
// prefetch their first weights (see run()).
#include "cpu/gemv_quant_q8.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "cpu/gemv_q8_units.h"
#include "cpu/thread_pool.h"
#include "quant/matmul.h"

namespace tc::cpu {
namespace {

// The smallest piece of rows a thread claims, in weight bytes (~2 us of streaming per thread).
constexpr int64_t kMinPieceBytes = 32 << 10;
// What a thread prefetches of its first piece while X is being quantized (~2 us on one core for
// K = 4096): in flight by the time the dots start.
constexpr int kLeadBytes = 8 << 10;
// Weights are prefetched ahead of the loads (past a row's end: the next row; past the
// matrix: a harmless hint). The hardware prefetcher alone left the streamed rate at ~72% of
// the same-run streaming read (14336 x 4096, M = 1, two threads); 2 KB ahead gave 84-100%
// (Q4_0 best 24.5-27.3 -> 31.5-37.1 GB/s, Q4_K 25.7-26.9 -> 31.7-32.7), 512 B and 8 KB less.
// Each unit sets its own distance and prefetches per group (gemv_q8_units.h, kPrefetch*).

inline void prefetch_range(const uint8_t* p, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64)
    _mm_prefetch(reinterpret_cast<const char*>(p + o), _MM_HINT_T0);
}

// One group of 256 weights at gw (group g of the row) dotted with every activation row.
template <class U, int M>
TC_AVX2 inline void group(const uint8_t* gw, int64_t g, const ActQ8& a, __m256 acc[M][2]) {
  typename U::W wv;
  U::load(gw, wv);
  for (int m = 0; m < M; ++m) {
    U::dot(wv, a.group(m, g), acc[m]);
  }
}

// (No lambdas here: GCC compiles a lambda without the enclosing target attribute, and the
// AVX2 units would then be called, not inlined.)
template <class U, int M>
TC_AVX2 void rows(const uint8_t* w0, int64_t K, const ActQ8& a, float* y, int64_t ldy, int64_t n0,
                  int64_t n1) {
  constexpr int64_t kGroupBytes = int64_t{U::kBlockBytes} * U::kGroupBlocks;
  constexpr int kPrefetches = U::kPrefetches;  // evenly spaced over each group
  constexpr int kPrefetchBytes = U::kPrefetchAhead;
  const int64_t blocks = K / (U::kGroupBlocks == 1 ? 256 : 32);  // format blocks per row
  const int64_t full = blocks / U::kGroupBlocks;                 // whole groups
  const int tail = static_cast<int>(blocks % U::kGroupBlocks);   // blocks of the last group
  const int64_t row_bytes = blocks * U::kBlockBytes;
  // The piece's first bytes (the loop below prefetches kPrefetchBytes ahead of its loads).
  prefetch_range(w0 + n0 * row_bytes, std::min<int64_t>(kPrefetchBytes, (n1 - n0) * row_bytes));
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* w = w0 + n * row_bytes;
    __m256 acc[M][2];
    for (int m = 0; m < M; ++m) acc[m][0] = acc[m][1] = _mm256_setzero_ps();
    for (int64_t g = 0; g < full; ++g) {
      // The address is formed as an integer: it may lie past the end of W, where pointer
      // arithmetic would be undefined.
      const uintptr_t ahead = reinterpret_cast<uintptr_t>(w + g * kGroupBytes) + kPrefetchBytes;
      for (int i = 0; i < kPrefetches; ++i) {
        _mm_prefetch(reinterpret_cast<const char*>(ahead + i * (kGroupBytes / kPrefetches)),
                     _MM_HINT_T0);
      }
      group<U, M>(w + g * kGroupBytes, g, a, acc);
    }
    if (tail > 0) {
      alignas(32) uint8_t buf[kGroupBytes] = {};
      std::memcpy(buf, w + full * kGroupBytes, static_cast<size_t>(tail) * U::kBlockBytes);
      group<U, M>(buf, full, a, acc);
    }
    for (int m = 0; m < M; ++m) y[m * ldy + n] = hsum(_mm256_add_ps(acc[m][0], acc[m][1]));
  }
}

template <class U>
struct Rows {
  template <int M>
  struct K {
    static void run(const uint8_t* w, int64_t K, const ActQ8& a, float* y, int64_t ldy, int64_t n0,
                    int64_t n1) {
      rows<U, M>(w, K, a, y, ldy, n0, n1);
    }
  };
};

template <class U>
void unit_rows(const uint8_t* w, int64_t K, const ActQ8& a, int M, float* y, int64_t ldy,
               int64_t n0, int64_t n1) {
  dispatch_m<Rows<U>::template K>(M, w, K, a, y, ldy, n0, n1);
}

// Rows handed out in pieces from a shared counter, each a 1/(2T) share of what is left (at least
// kMinPieceBytes): a thread that starts late or is slowed by another process leaves its share
// to the others, and the last pieces are short, so the threads end within ~2 us of each other.
// (Two fixed halves left the caller waiting 11-38 us, median of a 4096 x 4096 Q4_0 call.)
class RowPieces {
 public:
  RowPieces(int64_t n, int64_t row_bytes, int threads)
      : n_(n), min_(std::max<int64_t>(1, kMinPieceBytes / row_bytes)), div_(2 * threads) {}
  // The next piece [*n0, *n1); false when every row is taken.
  bool claim(int64_t* n0, int64_t* n1) {
    int64_t cur = next_.load(std::memory_order_relaxed), size;
    do {
      if (cur >= n_) return false;
      size = std::min(n_ - cur, std::max(min_, (n_ - cur) / div_));
    } while (!next_.compare_exchange_weak(cur, cur + size, std::memory_order_relaxed));
    *n0 = cur;
    *n1 = cur + size;
    return true;
  }

 private:
  const int64_t n_, min_, div_;
  std::atomic<int64_t> next_{0};
};

// X, quantized once per call by whichever thread arrives first; the others prefetch their first
// piece of W meanwhile and then wait (a few us) for it.
class SharedAct {
 public:
  // Quantizes X into `a` or waits until another thread has.
  void ready(const float* x, int M, int64_t K, ActLayout layout, ActQ8* a) {
    int expected = 0;
    if (state_.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
      quantize_act_q8(x, M, K, layout, a);
      state_.store(2, std::memory_order_release);
      return;
    }
    for (int i = 0; state_.load(std::memory_order_acquire) != 2; ++i) {
      if (i < 4096) {
        _mm_pause();
      } else {
        std::this_thread::yield();  // the quantizing thread was preempted
      }
    }
  }

 private:
  std::atomic<int> state_{0};  // 0 not started, 1 being quantized, 2 ready
};

template <class U>
tc_status_t run(const quant::MatmulProblem& p) {
  const auto& d = p.d;
  // The caller's buffers, reused from call to call (no allocation in the decode loop). Named
  // through a pointer: inside the lambda the name of a thread_local means the running thread's.
  thread_local ActQ8 caller_act;
  ActQ8* const a = &caller_act;
  const int64_t row_bytes = d.K / (U::kGroupBlocks == 1 ? 256 : 32) * U::kBlockBytes;
  RowPieces pieces(d.N, row_bytes, thread_count());
  SharedAct act;
  // One chunk per thread; each claims its rows from `pieces`.
  parallel_for(
      thread_count(), 1,
      [&](int64_t, int64_t) {
        int64_t n0, n1;
        if (!pieces.claim(&n0, &n1)) return;
        prefetch_range(p.w + n0 * row_bytes, std::min<int64_t>(kLeadBytes, (n1 - n0) * row_bytes));
        act.ready(static_cast<const float*>(p.x), d.M, d.K, U::kLayout, a);
        do {
          unit_rows<U>(p.w, d.K, *a, d.M, p.y, int64_t{d.N}, n0, n1);
        } while (pieces.claim(&n0, &n1));
      },
      After::kLinger);
  return TC_SUCCESS;
}

}  // namespace

ActLayout q8_act_layout(tc_dtype_t w) {
  return w == TC_DTYPE_Q4_0 ? q8units::Q4_0::kLayout : ActLayout::natural;
}

void gemv_q8_act_rows(tc_dtype_t w, const uint8_t* W, int64_t K, const ActQ8& a, int M, float* y,
                      int64_t ldy, int64_t n0, int64_t n1) {
  switch (w) {
    case TC_DTYPE_Q4_0:
      return unit_rows<q8units::Q4_0>(W, K, a, M, y, ldy, n0, n1);
    case TC_DTYPE_Q8_0:
      return unit_rows<q8units::Q8_0>(W, K, a, M, y, ldy, n0, n1);
    default:
      return unit_rows<q8units::Q4_K>(W, K, a, M, y, ldy, n0, n1);
  }
}

tc_status_t gemv_q4_0_q8_0_avx2(const quant::MatmulProblem& p) {
  return run<q8units::Q4_0>(p);
}
tc_status_t gemv_q8_0_q8_0_avx2(const quant::MatmulProblem& p) {
  return run<q8units::Q8_0>(p);
}
tc_status_t gemv_q4_k_q8_0_avx2(const quant::MatmulProblem& p) {
  return run<q8units::Q4_K>(p);
}

}  // namespace tc::cpu
