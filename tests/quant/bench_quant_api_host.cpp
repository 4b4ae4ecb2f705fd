// Host cost of a public quantized call on this machine (not a test): what a decode step pays per
// GEMV before its launch. Prints (medians of 15 runs):
//   - tc_gemv_quantized on a CPU context, M 1, N 8, K 256, Q4_0, 8-bit activations: validation,
//     dispatch and a kernel of a few hundred ns (run it against an older libtc.so through
//     LD_LIBRARY_PATH for the before/after of the dispatch memo);
//   - one getenv of an unset TC_QUANT_* knob with this environment, and the ten a bulk GEMV
//     launch reads; the environment fingerprint the decision memo takes per call
//     (memo::read_knobs: one check of the environment through the knob cache, core/knobs.h).
#include <tc/tc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "core/dispatch_memo.h"

namespace {

using Clock = std::chrono::steady_clock;

// Median ns per call of f() over 15 runs of `n` calls.
template <class F>
double ns_per_call(int n, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < 15; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) f();
    t.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The knobs the bulk GEMV's launcher reads per launch (gemv_quant_bulk.cu, trace header).
const char* const kBulkKnobs[] = {
    "TC_QUANT_BULK_CTAS",    "TC_QUANT_BULK_WARPS",  "TC_QUANT_BULK_SMEM_KB",
    "TC_QUANT_BULK_STAGES",  "TC_QUANT_BULK_FIRST",  "TC_QUANT_BULK_RP",
    "TC_QUANT_BULK_XREG",    "TC_QUANT_BULK_ABLATE", "TC_QUANT_BULK_TRACE",
    "TC_QUANT_BULK_VERBOSE", "TC_QUANT_BULK_DOT",    "TC_QUANT_BULK_PACE",
    "TC_QUANT_BULK_XPAIRS",  "TC_QUANT_BULK_XCL",    "TC_QUANT_BULK_XCL_K",
    "TC_QUANT_BULK_PACE_KB"};

volatile int g_sink;

}  // namespace

int main() {
  int env_entries = 0;
  for (char** e = environ; *e != nullptr; ++e) ++env_entries;

  tc_context_t* ctx = nullptr;
  if (tc_context_create(&ctx, TC_DEVICE_CPU) != TC_SUCCESS) return 1;
  const int M = 1, N = 8, K = 256;
  std::vector<float> w(size_t(N) * K), x(size_t(M) * K);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float((i * 7919) % 97) / 97.0f - 0.5f;
  for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 104729) % 89) / 89.0f - 0.5f;
  std::vector<uint8_t> q(tc_quant_row_bytes(TC_DTYPE_Q4_0, K) * N);
  tc_quantize(TC_DTYPE_Q4_0, w.data(), N, K, q.data(), q.size());
  tc_buffer_t *W = nullptr, *X = nullptr, *Y = nullptr;
  tc_buffer_alloc(ctx, q.size(), &W);
  tc_buffer_write(W, 0, q.data(), q.size());
  tc_buffer_alloc(ctx, x.size() * 4, &X);
  tc_buffer_write(X, 0, x.data(), x.size() * 4);
  tc_buffer_alloc(ctx, size_t(M) * N * 4, &Y);
  tc_quant_matmul_desc d{};
  d.M = M, d.N = N, d.K = K;
  d.w_dtype = TC_DTYPE_Q4_0;
  d.x_dtype = d.y_dtype = TC_DTYPE_F32;
  d.quantize_activations = true;
  bool ok = true;
  const double call_ns = ns_per_call(
      20000, [&] { ok = ok && tc_gemv_quantized(ctx, &d, W, nullptr, X, Y) == TC_SUCCESS; });
  if (!ok) {
    std::fprintf(stderr, "tc_gemv_quantized: %s\n", tc_last_error_message());
    return 1;
  }
  const char* row = tc_last_instance();

  const double getenv_ns =
      ns_per_call(200000, [] { g_sink = std::getenv("TC_QUANT_BULK_STAGES") != nullptr; });
  const double knobs_getenv_ns = ns_per_call(20000, [] {
    int s = 0;
    for (const char* k : kBulkKnobs) s += std::getenv(k) != nullptr;
    g_sink = s;
  });
  const double fingerprint_ns =
      ns_per_call(200000, [] { g_sink = int(tc::memo::read_knobs().fingerprint & 1); });
  std::printf("environment: %d entries\n", env_entries);
  std::printf("tc_gemv_quantized (CPU, M %d N %d K %d Q4_0 q8, %s): %.0f ns/call\n", M, N, K, row,
              call_ns);
  std::printf(
      "getenv of an unset knob: %.0f ns; the bulk launch's %zu: %.0f ns; "
      "environment fingerprint: %.0f ns\n",
      getenv_ns, std::size(kBulkKnobs), knobs_getenv_ns, fingerprint_ns);
  for (tc_buffer_t* b : {W, X, Y}) tc_buffer_free(b);
  tc_context_destroy(ctx);
  return 0;
}
