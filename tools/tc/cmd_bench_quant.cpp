// `tc bench decode` and `tc bench quant`, under `tc bench` (issue 4).
//  decode: the synthetic Llama-2-7B decode step on CUDA, one CUDA graph per step: tok/s,
//          effective GB/s, share of the copy bandwidth of the same run, peak device memory
//          (bench/bench_decode.cpp).
//  quant:  each quantized kernel's GB/s (decode; hot-weight and rotated shapes) and TFLOP/s
//          (prefill M = 512) on CUDA (bench/bench_quant_cuda.cpp); on the CPU the CPU
//          benchmark against a streaming read (bench/bench_quant_cpu.cpp).
#include <fmt/format.h>

#include <fstream>
#include <memory>

#include "bench_quant_cpu.h"
#include "commands.h"
#ifdef TC_HAVE_BENCH_DECODE
#include "bench_decode.h"
#endif

namespace {

struct Options {
  std::string device = "auto", json;
  std::vector<std::string> formats;
  std::vector<int> batches, ms;
  std::vector<std::string> x;
  int layers = 32, n = 4096, k = 4096;
  double seconds = 0;
  bool per_shape = false;
};

tc_context_t* open_context(const Options& o, const char* cmd) {
  const tc_device_t dev = o.device == "cpu"    ? TC_DEVICE_CPU
                          : o.device == "cuda" ? TC_DEVICE_CUDA
                                               : TC_DEVICE_AUTO;
  tc_context_t* ctx = nullptr;
  if (tc_context_create(&ctx, dev) != TC_SUCCESS) {
    fmt::print(stderr, "tc bench {}: {}\n", cmd, tc_last_error_message());
    throw CLI::RuntimeError(2);
  }
  return ctx;
}

bool is_cuda(tc_context_t* ctx) {
  tc_device_info info{};
  tc_context_device_info(ctx, &info);
  return info.device == TC_DEVICE_CUDA;
}

[[maybe_unused]] void write_json(const std::string& path, const std::string& text) {
  if (!path.empty()) std::ofstream(path) << text << "\n";
}

void run_decode(const Options& o) {
  tc_context_t* ctx = open_context(o, "decode");
  if (!is_cuda(ctx)) {
    tc_context_destroy(ctx);
    fmt::print(stderr, "tc bench decode: needs a CUDA device (the CPU figures: tc bench quant)\n");
    throw CLI::RuntimeError(2);
  }
#ifdef TC_HAVE_BENCH_DECODE
  tc::bench::DecodeBenchOptions d;
  if (!o.formats.empty()) d.formats = o.formats;
  if (!o.batches.empty()) d.batches = o.batches;
  if (!o.x.empty()) d.x = o.x;
  d.layers = o.layers;
  d.per_shape = o.per_shape;
  if (o.seconds > 0) d.seconds = o.seconds;
  write_json(o.json, tc::bench::run_decode_bench(ctx, d).dump(1));
#else
  fmt::print(stderr, "tc bench decode: this build has no CUDA benchmark (bench/ not built)\n");
#endif
  tc_context_destroy(ctx);
}

void run_quant(const Options& o) {
  tc_context_t* ctx = open_context(o, "quant");
  const std::vector<int>& ms = o.ms;
  if (is_cuda(ctx)) {
#ifdef TC_HAVE_BENCH_DECODE
    tc::bench::QuantKernelBenchOptions q;
    if (!o.formats.empty()) q.formats = o.formats;
    if (!ms.empty()) q.ms = ms;
    if (o.seconds > 0) q.seconds = o.seconds;
    write_json(o.json, tc::bench::run_quant_kernel_bench(ctx, q).dump(1));
#else
    fmt::print(stderr, "tc bench quant: this build has no CUDA benchmark (bench/ not built)\n");
#endif
    tc_context_destroy(ctx);
    return;
  }
  tc_context_destroy(ctx);
  tc::bench::QuantBenchReport r;
  if (!tc::bench::bench_quant_cpu(o.n, o.k, ms.empty() ? std::vector<int>{1, 8} : ms,
                                  o.seconds > 0 ? o.seconds : 0.5, &r)) {
    fmt::print(stderr, "tc bench quant: {}\n", tc_last_error_message());
    throw CLI::RuntimeError(2);
  }
  tc::bench::print_quant_report(r, stdout);
}

void add_common(CLI::App* c, const std::shared_ptr<Options>& o) {
  c->add_option("--device", o->device, "auto | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  c->add_option("--formats", o->formats, "comma-separated q4_0,q8_0,q4_k (default all three)")
      ->delimiter(',')
      ->check(CLI::IsMember({"q4_0", "q8_0", "q4_k"}));
  c->add_option("--seconds", o->seconds, "GPU/CPU measuring time per cell");
  c->add_option("--json", o->json, "write the figures as JSON");
}

}  // namespace

void tc_cli_add_bench_quant(CLI::App& app) {
  CLI::App* bench = app.get_subcommand("bench");
  auto o = std::make_shared<Options>();
  auto* decode = bench->add_subcommand(
      "decode", "synthetic Llama-2-7B decode step (CUDA graph): tok/s, GB/s, % of copy bandwidth");
  add_common(decode, o);
  decode
      ->add_option("--batches", o->batches,
                   "comma-separated batch sizes 1..32 (default 1,2,4,8,16,32)")
      ->delimiter(',')
      ->check(CLI::Range(1, 32));
  decode
      ->add_option("--x", o->x,
                   "comma-separated activation types f32,f16,bf16,q8_0 (default f32,f16; f16 / "
                   "bf16: 8-bit cells with X read in half precision; q8_0: X given as Q8_0 "
                   "blocks, as an RMSNorm that quantizes its output would write it, batches <= 2)")
      ->delimiter(',')
      ->check(CLI::IsMember({"f32", "f16", "bf16", "q8_0"}));
  decode->add_option("--layers", o->layers, "transformer layers (default 32)")
      ->check(CLI::Range(1, 32));
  decode->add_flag("--per-shape", o->per_shape,
                   "also time each layer shape alone (us a launch against its streaming time) and "
                   "its cost in the step (the step less the step without it)");
  decode->callback([o] { run_decode(*o); });
  auto* quant = bench->add_subcommand(
      "quant", "quantized kernels: GB/s (decode, hot and rotated), TFLOP/s (prefill M=512)");
  add_common(quant, o);
  quant->add_option("--ms", o->ms, "comma-separated M of the decode cells (1..32)")
      ->delimiter(',')
      ->check(CLI::Range(1, 32));
  quant->add_option("--n", o->n, "CPU: rows of W (default 4096)")->check(CLI::Range(1, 1 << 20));
  quant->add_option("--k", o->k, "CPU: columns of W, a multiple of 256 (default 4096)")
      ->check(CLI::Range(256, 1 << 20));
  quant->callback([o] { run_quant(*o); });
}
