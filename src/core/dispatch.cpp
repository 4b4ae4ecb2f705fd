#include "core/dispatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "core/dispatch_memo.h"
#include "core/env.h"
#include "core/error.h"
#ifdef TC_HAVE_CUDA
#include "core/autotune.h"
#endif

namespace tc {
namespace {
thread_local tc_backend_t t_backend = TC_BACKEND_NONE;
thread_local const char* t_instance = "";
thread_local const char* t_noted = nullptr;

uint64_t generation() {
#ifdef TC_HAVE_CUDA
  return autotune::generation();
#else
  return 0;
#endif
}

bool backend_on_device(tc_backend_t b, tc_device_t dev) {
  bool cuda = b == TC_BACKEND_CUDA || b == TC_BACKEND_CUBLASLT;
  return cuda == (dev == TC_DEVICE_CUDA);
}

std::string describe(const GemmProblem& p) {
  return fmt::format("{}x{}x{}{} {}{} {}->{}", p.d.M, p.d.N, p.d.K,
                     p.batch > 1 ? fmt::format(" batch {}", p.batch) : std::string(),
                     p.d.transpose_a ? 'T' : 'N', p.d.transpose_b ? 'T' : 'N',
                     tc_dtype_name(p.d.a_dtype), tc_dtype_name(p.d.c_dtype));
}

const GemmRow* pick_forced(const GemmProblem& p, const std::string& prefix) {
  std::string skipped;
  for (const GemmRow& row : gemm_table()) {
    if (!backend_on_device(row.backend, p.ctx->device)) continue;
    if (std::string(row.name).rfind(prefix, 0) != 0) continue;
    std::string why;
    if (row.can_run(p, why)) return &row;
    skipped += fmt::format(" {} ({});", row.name, why);
  }
  fail(TC_ERROR_NOT_SUPPORTED, "TC_GEMM_ROW={} names no row of this device that serves {}:{}",
       prefix, describe(p), skipped.empty() ? " no row has that prefix" : skipped);
  return nullptr;
}

#ifdef TC_HAVE_CUDA
const GemmRow* find_row(const GemmProblem& p, const char* name) {
  for (const GemmRow& row : gemm_table()) {
    if (std::strcmp(name, row.name) != 0 || !backend_on_device(row.backend, p.ctx->device))
      continue;
    std::string why;
    return row.can_run(p, why) ? &row : nullptr;
  }
  return nullptr;
}

// Times every row (and variant) that can serve p; autotune::choose decides (near-ties timed
// again, the ladder rule, and cuBLASLt's variant 0, the direct caller's algorithm, kept unless
// another candidate is more than 5% faster).
const GemmRow* tune(GemmProblem& p, GemmTimer& timer) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<autotune::Timed> cands;
  std::string log;
  for (const GemmRow& row : gemm_table()) {
    std::string why;
    if (!backend_on_device(row.backend, p.ctx->device) || !row.can_run(p, why)) continue;
    const int n = timer.gemm_variants(p, row);
    for (int v = 0; v < n; ++v) {
      const double ms = timer.time_gemm(p, row, v);
      log += fmt::format(" {}#{}={:.4f}ms", row.name, v, ms);
      if (ms > 0) cands.push_back({&row, v, ms});
    }
  }
  const int w = autotune::choose(
      cands, [&](const autotune::Timed& c) { return timer.time_gemm(p, *c.row, c.variant); }, &log);
  clear_error();      // a failed candidate must not leave its message behind
  t_noted = nullptr;  // nor the instance name a candidate noted
  if (w < 0) return nullptr;
  const autotune::Timed& best = cands[size_t(w)];
  const double tune_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  log_debug(fmt::format("autotune {}: chose {}#{} after {:.1f} ms of tuning;{}", describe(p),
                        best.row->name, best.variant, tune_ms, log));
  autotune::store(p, timer.device_key(), {best.row->name, best.variant, best.ms, log});
  p.variant = best.variant;
  return best.row;
}

// The autotune hook: nullptr means "use the ladder".
const GemmRow* pick_tuned(GemmProblem& p, const memo::Knobs& knobs) {
  if (!autotune::enabled_value(knobs.autotune)) return nullptr;
  auto* timer = dynamic_cast<GemmTimer*>(p.ctx->impl.get());
  if (timer == nullptr) return nullptr;
  if (auto e = autotune::lookup(p, timer->device_key())) {
    if (const GemmRow* row = find_row(p, e->row)) {
      p.variant = e->variant < timer->gemm_variants(p, *row) ? e->variant : 0;
      return row;
    }
  }
  return tune(p, *timer);
}
#endif

}  // namespace

void record_dispatch(tc_backend_t backend, const char* instance) {
  t_backend = backend;
  t_instance = t_noted != nullptr ? t_noted : instance;
  t_noted = nullptr;
}

void note_instance(const char* name) {
  t_noted = name;
}

const char* intern_name(const std::string& name) {
  static std::mutex mu;
  static std::unordered_set<std::string> names;  // node-based: element addresses are stable
  std::lock_guard lock(mu);
  return names.insert(name).first->c_str();
}

namespace {

// The decision for p (row, p.variant), without the memo.
const GemmRow* decide(GemmProblem& p, const memo::Knobs& knobs) {
  const bool debug = knobs.debug;
#ifdef TC_HAVE_CUDA
  if (const GemmRow* row = pick_tuned(p, knobs)) {
    if (debug)
      log_debug(fmt::format("gemm {}: ran {}#{} (autotuned)", describe(p), row->name, p.variant));
    return row;
  }
#endif
  std::string skipped;
  for (const GemmRow& row : gemm_table()) {
    std::string why;
    if (!backend_on_device(row.backend, p.ctx->device)) continue;
    if (!row.can_run(p, why)) {
      if (debug) skipped += fmt::format(" {} ({});", row.name, why);
      continue;
    }
    if (debug)
      log_debug(fmt::format("gemm {}: ran {}; skipped:{}", describe(p), row.name,
                            skipped.empty() ? " none" : skipped));
    return &row;
  }
  fail(TC_ERROR_NOT_SUPPORTED, "no GEMM kernel on this device serves {}x{}x{} with {} inputs",
       p.d.M, p.d.N, p.d.K, tc_dtype_name(p.d.a_dtype));
  return nullptr;
}

}  // namespace

const GemmRow* pick_gemm_row(GemmProblem& p) {
  const memo::Knobs knobs = memo::read_knobs();
  p.variant = 0;
  t_noted = nullptr;
  if (knobs.gemm_row != nullptr) return pick_forced(p, knobs.gemm_row);
  // TC_LOG=debug logs every decision, so it bypasses the memo.
  if (knobs.debug) return decide(p, knobs);
  const memo::CallKey key = memo::key_of(p, knobs.fingerprint, generation());
  memo::Slot& slot = memo::slot_for(key);
  if (slot.used && slot.key == key) {
    p.variant = slot.variant;
    return slot.row;
  }
  const GemmRow* row = decide(p, knobs);
  // Kept under the generation read before deciding: a winner stored while deciding bumps it,
  // so the next call looks again (and finds the stored winner) rather than trusting this one.
  if (row != nullptr) slot = {true, key, row, p.variant};
  return row;
}

}  // namespace tc

extern "C" {

tc_backend_t tc_last_backend(void) {
  return tc::t_backend;
}
const char* tc_last_instance(void) {
  return tc::t_instance;
}

const char* tc_backend_name(tc_backend_t backend) {
  switch (backend) {
    case TC_BACKEND_NONE:
      return "none";
    case TC_BACKEND_CPU:
      return "cpu";
    case TC_BACKEND_OPENBLAS:
      return "openblas";
    case TC_BACKEND_CUDA:
      return "cuda";
    case TC_BACKEND_CUBLASLT:
      return "cublaslt";
    default:
      break;
  }
  return "unknown";
}

}  // extern "C"
