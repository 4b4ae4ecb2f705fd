#include "gemm_cuda_bench.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "cublaslt_peer.h"
#include "gpu_timer.h"

namespace tc::bench {
namespace {

size_t round256(size_t x) {
  return (x + 255) / 256 * 256;
}

// TC_AUTOTUNE=0 for the lifetime of the object (the knob is read at every call).
class LadderOnly {
 public:
  LadderOnly() {
    if (const char* v = getenv("TC_AUTOTUNE")) old_ = v;
    setenv("TC_AUTOTUNE", "0", 1);
  }
  ~LadderOnly() {
    if (old_)
      setenv("TC_AUTOTUNE", old_->c_str(), 1);
    else
      unsetenv("TC_AUTOTUNE");
  }

 private:
  std::optional<std::string> old_;
};

// The buffers of one case: `sets` copies of A and B back to back (each 256-byte aligned, as
// separate allocations would be) and views of each copy, plus C.
struct CaseBuffers {
  tc_context_t* ctx = nullptr;
  tc_buffer_t *a_all = nullptr, *b_all = nullptr, *c = nullptr;
  std::vector<tc_buffer_t*> a, b;
  ~CaseBuffers() {
    for (auto* v : a) tc_buffer_free(v);
    for (auto* v : b) tc_buffer_free(v);
    for (auto* x : {a_all, b_all, c})
      if (x) tc_buffer_free(x);
  }
};

tc_status_t make_buffers(tc_context_t* ctx, cudaStream_t s, const GemmCase& c, tc_dtype_t in,
                         tc_dtype_t out, uint64_t l2, CaseBuffers* bufs, CellResult* r) {
  const size_t es = tc_dtype_size(in);
  const size_t a_bytes = round256(size_t(c.M) * c.K * c.batch * es);
  const size_t b_bytes = round256(size_t(c.K) * c.N * c.batch * es);
  const size_t c_bytes = round256(size_t(c.M) * c.N * c.batch * tc_dtype_size(out));
  // Enough copies that one pass over them is twice the L2, within 4 GiB.
  const size_t want = (2 * l2 + a_bytes + b_bytes - 1) / (a_bytes + b_bytes);
  const size_t cap = std::max<size_t>(1, (size_t(4) << 30) / (a_bytes + b_bytes));
  r->sets = int(std::clamp<size_t>(want, 1, std::min<size_t>(cap, 512)));
  r->buffer_bytes = r->sets * (a_bytes + b_bytes) + c_bytes;
  bufs->ctx = ctx;
  tc_status_t st = tc_buffer_alloc(ctx, r->sets * a_bytes, &bufs->a_all);
  if (st == TC_SUCCESS) st = tc_buffer_alloc(ctx, r->sets * b_bytes, &bufs->b_all);
  if (st == TC_SUCCESS) st = tc_buffer_alloc(ctx, c_bytes, &bufs->c);
  if (st != TC_SUCCESS) return st;
  auto* pa = static_cast<char*>(tc_buffer_device_ptr(bufs->a_all));
  auto* pb = static_cast<char*>(tc_buffer_device_ptr(bufs->b_all));
  // Every copy gets its own values (distinct seeds); none is all zeros.
  if (fill_random(pa, in, r->sets * a_bytes / es, 1, s) != cudaSuccess ||
      fill_random(pb, in, r->sets * b_bytes / es, 2, s) != cudaSuccess ||
      cudaMemsetAsync(tc_buffer_device_ptr(bufs->c), 0, c_bytes, s) != cudaSuccess ||
      cudaStreamSynchronize(s) != cudaSuccess)
    return TC_ERROR_BACKEND_FAILURE;
  for (int i = 0; i < r->sets; ++i) {
    tc_buffer_t *va = nullptr, *vb = nullptr;
    st = tc_buffer_wrap(ctx, pa + i * a_bytes, a_bytes, &va);
    if (st == TC_SUCCESS) st = tc_buffer_wrap(ctx, pb + i * b_bytes, b_bytes, &vb);
    if (st != TC_SUCCESS) return st;
    bufs->a.push_back(va);
    bufs->b.push_back(vb);
  }
  return TC_SUCCESS;
}

}  // namespace

double CellResult::value(double ms) const {
  if (ms <= 0) return -1;
  if (c.bandwidth) {
    tc_dtype_t in, out, accum;
    case_dtypes(c.dtype, &in, &out, &accum);
    return double(c.N) * c.K * tc_dtype_size(in) / (ms * 1e-3) / 1e9;
  }
  return 2.0 * c.M * c.N * double(c.K) * c.batch / (ms * 1e-3) / 1e12;
}

namespace {

CellResult run_case(tc_context_t* ctx, tc_stream_t* stream, CublasLtPeer* peer, const GemmCase& c,
                    const CudaBenchOptions& o, uint64_t l2) {
  CellResult r;
  r.c = c;
  auto s = static_cast<cudaStream_t>(tc_stream_native_handle(stream));
  tc_dtype_t in, out, accum;
  case_dtypes(c.dtype, &in, &out, &accum);
  tc_context_trim(ctx);  // restarts the peak: it is this case's alone
  CaseBuffers bufs;
  if (tc_status_t st = make_buffers(ctx, s, c, in, out, l2, &bufs, &r); st != TC_SUCCESS) {
    r.error = fmt::format("{}: {}", tc_status_string(st), tc_last_error_message());
    return r;
  }
  const tc_gemm_desc d{c.M, c.N, c.K, in, in, out, accum, c.ta, c.tb, 1.0f, 0.0f, 0, 0, 0};
  const tc_gemm_batched_desc bd{d, c.batch, int64_t(c.M) * c.K, int64_t(c.K) * c.N,
                                int64_t(c.M) * c.N};
  const int sets = r.sets;
  auto call_sync = [&](int i) {
    return c.batch > 1 ? tc_gemm_batched(ctx, &bd, bufs.a[i % sets], bufs.b[i % sets], bufs.c)
                       : tc_gemm(ctx, &d, bufs.a[i % sets], bufs.b[i % sets], bufs.c);
  };
  auto call_async = [&](int i) {
    const int k = i % sets;
    return (c.batch > 1
                ? tc_gemm_batched_async(ctx, &bd, bufs.a[k], bufs.b[k], bufs.c, stream)
                : tc_gemm_async(ctx, &d, bufs.a[k], bufs.b[k], bufs.c, stream)) == TC_SUCCESS;
  };
  // The first call of tc's dispatch as configured now (it tunes the class, loads modules and
  // plans): its wall time, and the instance that ran.
  auto first_call = [&](std::string* backend, std::string* instance, double* wall_ms) -> bool {
    const auto t0 = std::chrono::steady_clock::now();
    if (tc_status_t st = call_sync(0); st != TC_SUCCESS) {
      r.error = fmt::format("{}: {}", tc_status_string(st), tc_last_error_message());
      return false;
    }
    if (wall_ms)
      *wall_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    // What tuning held (candidates' workspaces, rotated copies) is reported apart; from here
    // the peak is the steady state: buffers plus the chosen kernel's workspace.
    uint64_t live, held, peak;
    tc_context_memory_stats(ctx, &live, &held, &peak);
    r.tune_peak_bytes = std::max(r.tune_peak_bytes, peak);
    tc_context_trim(ctx);
    *backend = tc_backend_name(tc_last_backend());
    *instance = tc_last_instance();
    return true;
  };
  if (!first_call(&r.backend, &r.instance, &r.first_call_ms)) return r;
  if (r.backend != "cuda") {  // the tuned choice is cuBLASLt: time tc's own kernels too
    LadderOnly ladder;
    std::string backend;
    if (first_call(&backend, &r.own_instance, nullptr) && backend == "cuda") {
      r.own_ms = median_ms(s, call_async, o.seconds);
      if (tc_stream_sync(stream) != TC_SUCCESS) r.own_ms = -1;
    }
    if (backend != "cuda") r.own_instance.clear();
    r.error.clear();
  }
  // tc's dispatch, and the peer in alternating batches when asked: drift of the GPU's speed
  // (clocks, power) then weighs on both alike.
  PeerProblem q{c.M, c.N, c.K, c.batch, in, out, accum, c.ta, c.tb};
  auto* pc = tc_buffer_device_ptr(bufs.c);
  auto call_peer = [&](int i) {
    return peer->run(tc_buffer_device_ptr(bufs.a[i % sets]), tc_buffer_device_ptr(bufs.b[i % sets]),
                     pc, s);
  };
  const bool with_peer = o.vs_peer && peer->prepare(q, &r.peer_error);
  if (with_peer) {
    r.peer_algo = peer->algo_tag();
    const Launch tc_launch = call_async, peer_launch = call_peer;
    const Launch* pair[] = {&tc_launch, &peer_launch};
    double ms[2];
    alternating_median_ms(s, pair, o.seconds, ms);
    r.tc_ms = ms[0];
    r.peer_ms = ms[1];
    r.peer_host_us = host_us_per_call(s, call_peer);
    if (r.peer_ms < 0 && r.peer_error.empty()) r.peer_error = "cublasLtMatmul failed";
  } else {
    r.tc_ms = median_ms(s, call_async, o.seconds);
  }
  r.tc_host_us = host_us_per_call(s, call_async);
  if (tc_stream_sync(stream) != TC_SUCCESS) r.tc_ms = -1;
  if (r.tc_ms < 0 && r.error.empty())
    r.error = fmt::format("timing tc's calls failed: {}", tc_last_error_message());
  if (r.backend == "cuda") {
    r.own_ms = r.tc_ms;
    r.own_instance = r.instance;
  }
  uint64_t live, held;
  tc_context_memory_stats(ctx, &live, &held, &r.peak_bytes);
  return r;
}

int device_ordinal() {
  const char* v = getenv("TC_CUDA_DEVICE");
  return v ? atoi(v) : 0;
}

}  // namespace

nlohmann::json run_cuda_gemm_bench(tc_context_t* ctx, const CudaBenchOptions& o) {
  cudaSetDevice(device_ordinal());  // this tool's CUDA runtime: the same GPU as the context
  tc_device_info info;
  tc_context_device_info(ctx, &info);
  tc_stream_t* stream = nullptr;
  if (tc_stream_create(ctx, &stream) != TC_SUCCESS) return {{"error", tc_last_error_message()}};
  std::unique_ptr<CublasLtPeer> peer;
  if (o.vs_peer) peer = std::make_unique<CublasLtPeer>();
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));

  std::vector<GemmCase> cases;
  for (auto& c : gemm_cases(o.cases))
    if (o.filter.empty() || c.label.find(o.filter) != std::string::npos) cases.push_back(c);
  nlohmann::json doc = {
      {"tool", "tc bench gemm"},
      {"version", tc_version_string()},
      {"device", info.name},
      {"sm_count", info.compute_units},
      {"l2_bytes", info.l2_bytes},
      {"date", date},
      {"cuda_driver", driver},
      {"cuda_runtime", runtime},
      {"cublaslt", cublasLtGetVersion()},
      {"peer",
       o.vs_peer ? "cublaslt (direct, heuristic #1, 32 MiB workspace; batches alternate with tc's)"
                 : "none"},
      {"cells", nlohmann::json::array()},
      {"tables", nlohmann::json::object()}};
  std::vector<CellResult> table_cells;
  std::string table;
  auto flush = [&] {
    if (table_cells.empty()) return;
    print_table(table, table_cells, o.vs_peer);
    uint64_t peak = 0;
    for (auto& r : table_cells) peak = std::max(peak, r.peak_bytes);
    doc["tables"][table] = {{"peak_device_bytes", peak}, {"cells", table_cells.size()}};
    table_cells.clear();
  };
  fmt::print(
      "tc bench gemm on {} ({} SMs, L2 {} MiB), {}; tc {}, cuBLASLt {}, driver {}, "
      "runtime {}\n",
      info.name, info.compute_units, info.l2_bytes >> 20, date, tc_version_string(),
      cublasLtGetVersion(), driver, runtime);
  size_t done = 0;
  for (const GemmCase& c : cases) {
    if (c.table != table) {
      flush();
      table = c.table;
    }
    fmt::print(stderr, "[{}/{}] {}\n", ++done, cases.size(), c.label);
    const auto t0 = std::chrono::steady_clock::now();
    CellResult r = run_case(ctx, stream, peer.get(), c, o, info.l2_bytes);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json cj = cell_json(r);
    cj["wall_seconds"] = secs;
    doc["cells"].push_back(cj);
    table_cells.push_back(std::move(r));
  }
  flush();
  tc_stream_destroy(stream);
  return doc;
}

}  // namespace tc::bench
