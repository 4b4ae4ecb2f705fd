// `tc bench gemm`: the GEMM document's sweep (256..4096, 8192 with --large) over f16, bf16, f32
// and i8; median of repeats per cell; a table of TFLOP/s (TOP/s for i8) and backend per cell;
// --vs-peer adds the peer measured in the same run (OpenBLAS sgemm called directly on the CPU).
// On a CUDA context the benchmark is bench/gemm_cuda_bench.h's: the sweep (tf32 too), odd
// shapes, NT/TN, batched and decode tables timed with CUDA events, cuBLASLt as the peer
// (--vs-peer, alias --vs-cublas), peak device memory per table.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "gemm_runner.h"
#ifdef TC_HAVE_BENCH_EXTRAS
#include "gemm_cuda_bench.h"
#endif

namespace {

struct Options {
  std::vector<int> sizes{256, 512, 1024, 2048, 4096};
  std::vector<std::string> dtypes{"f16", "bf16", "f32", "i8"};
  bool large = false, vs_peer = false, check = false;
  std::string json, device = "auto";
  double seconds = 0.5;
  bool seconds_given = false, dtypes_given = false, sizes_given = false;
  std::vector<std::string> suites;  // CUDA: sweep, shapes, decode (default all)
  std::string filter;               // CUDA: only cases whose label contains this
};

void run_cuda_bench([[maybe_unused]] tc_context_t* ctx, [[maybe_unused]] const Options& o) {
#ifdef TC_HAVE_BENCH_EXTRAS
  tc::bench::CudaBenchOptions co;
  if (!o.suites.empty()) co.cases.suites = o.suites;
  if (o.sizes_given) co.cases.sizes = o.sizes;
  if (o.dtypes_given) co.cases.dtypes = o.dtypes;
  co.cases.large = o.large;
  co.vs_peer = o.vs_peer;
  co.filter = o.filter;
  if (o.seconds_given) co.seconds = o.seconds;
  nlohmann::json doc = tc::bench::run_cuda_gemm_bench(ctx, co);
  if (!o.json.empty()) std::ofstream(o.json) << doc.dump(1) << "\n";
#else
  fmt::print(stderr, "tc bench: this build has no CUDA benchmark (bench/ was not built)\n");
  throw CLI::RuntimeError(2);
#endif
}

void run_bench(const Options& o) {
  tc_device_t dev = o.device == "cpu"    ? TC_DEVICE_CPU
                    : o.device == "cuda" ? TC_DEVICE_CUDA
                                         : TC_DEVICE_AUTO;
  tc_context_t* ctx = nullptr;
  if (tc_context_create(&ctx, dev) != TC_SUCCESS) {
    fmt::print(stderr, "tc bench: {}\n", tc_last_error_message());
    throw CLI::RuntimeError(2);
  }
  tc_device_info info;
  tc_context_device_info(ctx, &info);
  if (info.device == TC_DEVICE_CUDA) {
    run_cuda_bench(ctx, o);
    tc_context_destroy(ctx);
    return;
  }
  std::vector<int> sizes = o.sizes;
  if (o.large) sizes.push_back(8192);
  nlohmann::json cells = nlohmann::json::array();
  // cell text per (size, dtype)
  std::vector<std::vector<std::string>> table(sizes.size());
  size_t total = sizes.size() * o.dtypes.size(), done = 0;
  for (size_t si = 0; si < sizes.size(); ++si) {
    for (auto& dt : o.dtypes) {
      tc::cli::GemmSpec s;
      s.M = s.N = s.K = sizes[si];
      tc::cli::parse_dtype(dt, s);
      fmt::print(stderr, "\r[{}/{}] {}^3 {}...        ", ++done, total, sizes[si], dt);
      std::fflush(stderr);
      auto r = tc::cli::run_gemm(ctx, s, o.check, o.seconds, 3);
      nlohmann::json cell = {{"M", s.M}, {"N", s.N}, {"K", s.K}, {"dtype", dt}};
      if (r.status != TC_SUCCESS) {
        table[si].push_back("error");
        cell["error"] = r.error;
        cells.push_back(cell);
        continue;
      }
      std::string text = fmt::format("{:8.3f} {:<9}", r.tflops, r.backend);
      cell.update({{"seconds", r.seconds},
                   {"tflops", r.tflops},
                   {"backend", r.backend},
                   {"instance", r.instance}});
      if (o.check) cell["rms_scaled"] = r.rms;
      if (o.vs_peer && info.device == TC_DEVICE_CPU && dt == "f32") {
        double peer = tc::cli::time_openblas_sgemm(s, o.seconds, 3);
        double ratio = peer / r.seconds;
        cell.update({{"peer", "openblas_sgemm"}, {"peer_seconds", peer}, {"ratio", ratio}});
        text += fmt::format(" x{:.2f}", ratio);
      }
      table[si].push_back(text);
      cells.push_back(cell);
    }
  }
  fmt::print(stderr, "\r{:60}\r", "");
  uint64_t peak = 0;
  tc_context_memory_stats(ctx, nullptr, nullptr, &peak);
  fmt::print("tc bench gemm on {} ({}); TFLOP/s (TOP/s for i8), median of repeats, backend{}\n",
             info.name, info.device == TC_DEVICE_CPU ? "cpu" : "cuda",
             o.vs_peer ? ", xR = peer time / our time (>1: faster)" : "");
  fmt::print("{:>6}", "size");
  for (auto& dt : o.dtypes) fmt::print(" | {:<24}", dt);
  fmt::print("\n");
  for (size_t si = 0; si < sizes.size(); ++si) {
    fmt::print("{:>6}", sizes[si]);
    for (auto& c : table[si]) fmt::print(" | {:<24}", c);
    fmt::print("\n");
  }
  if (info.device == TC_DEVICE_CUDA)
    fmt::print("peak device memory held: {:.1f} MiB\n", peak / double(1 << 20));
  if (!o.json.empty()) {
    nlohmann::json doc = {{"tool", "tc bench gemm"},
                          {"version", tc_version_string()},
                          {"device", info.name},
                          {"cells", cells},
                          {"peak_device_bytes", peak}};
    std::ofstream(o.json) << doc.dump(2) << "\n";
  }
  tc_context_destroy(ctx);
}

}  // namespace

void tc_cli_add_bench(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto o = std::make_shared<Options>();
  auto* gemm = bench->add_subcommand("gemm", "GEMM sweep: sizes x dtypes, TFLOP/s and backend");
  auto* sizes =
      gemm->add_option("--sizes", o->sizes, "comma-separated square sizes (default 256..4096)")
          ->delimiter(',')
          ->check(CLI::Range(1, 1 << 16));
  auto* dtypes = gemm->add_option("--dtypes", o->dtypes, "comma-separated: f16,bf16,f32,tf32,i8")
                     ->delimiter(',')
                     ->check([](const std::string& d) {
                       tc::cli::GemmSpec s;
                       return tc::cli::parse_dtype(d, s) ? std::string() : "unknown dtype " + d;
                     });
  gemm->add_flag("--large", o->large, "add 8192");
  gemm->add_flag("--vs-peer,--vs-cublas", o->vs_peer,
                 "time the peer library (OpenBLAS on the CPU, cuBLASLt on CUDA) in the same run");
  gemm->add_flag("--check", o->check, "check each cell against float64 on sampled rows");
  gemm->add_option("--json", o->json, "write the cells as JSON");
  gemm->add_option("--device", o->device, "auto | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  auto* secs = gemm->add_option("--seconds", o->seconds, "minimum measuring time per cell");
  gemm->add_option("--suites", o->suites, "CUDA: comma-separated sweep,shapes,decode (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"sweep", "shapes", "decode"}));
  gemm->add_option("--filter", o->filter, "CUDA: only cases whose label contains this text");
  gemm->callback([o, sizes, dtypes, secs] {
    o->seconds_given = secs->count() > 0;
    o->sizes_given = sizes->count() > 0;
    o->dtypes_given = dtypes->count() > 0;
    run_bench(*o);
  });
}
