// `tc gemm`: one GEMM with random inputs; prints the time, TFLOP/s, backend and (--check) the
// rms_scaled error against float64.
#include <fmt/format.h>

#include "commands.h"
#include "gemm_runner.h"

namespace {

struct Options {
  tc::cli::GemmSpec spec;
  std::string dtype = "f32", device = "auto";
  bool check = false;
  double seconds = 1.0;
};

tc_device_t parse_device(const std::string& s) {
  if (s == "cpu") return TC_DEVICE_CPU;
  if (s == "cuda") return TC_DEVICE_CUDA;
  return TC_DEVICE_AUTO;
}

}  // namespace

void tc_cli_add_gemm(CLI::App& app) {
  auto opt = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("gemm", "Run one GEMM and report time, TFLOP/s and backend");
  cmd->add_option("--m", opt->spec.M, "rows of C")->check(CLI::PositiveNumber);
  cmd->add_option("--n", opt->spec.N, "columns of C")->check(CLI::PositiveNumber);
  cmd->add_option("--k", opt->spec.K, "inner dimension")->check(CLI::PositiveNumber);
  cmd->add_option("--dtype", opt->dtype, "f32 | tf32 | f16 | bf16 | i8")
      ->check(CLI::IsMember({"f32", "tf32", "f16", "bf16", "i8"}));
  cmd->add_flag("--ta", opt->spec.ta, "A is stored transposed (K x M)");
  cmd->add_flag("--tb", opt->spec.tb, "B is stored transposed (N x K)");
  cmd->add_option("--batch", opt->spec.batch, "batched GEMM count")->check(CLI::PositiveNumber);
  cmd->add_option("--device", opt->device, "auto | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--seconds", opt->seconds, "time to spend measuring");
  cmd->add_flag("--check", opt->check, "compare sampled rows with a float64 reference");
  cmd->callback([opt] {
    tc::cli::parse_dtype(opt->dtype, opt->spec);
    tc_context_t* ctx = nullptr;
    if (tc_context_create(&ctx, parse_device(opt->device)) != TC_SUCCESS) {
      fmt::print(stderr, "tc gemm: {}\n", tc_last_error_message());
      throw CLI::RuntimeError(2);
    }
    auto& s = opt->spec;
    auto r = tc::cli::run_gemm(ctx, s, opt->check, opt->seconds, 3);
    tc_context_destroy(ctx);
    if (r.status != TC_SUCCESS) {
      fmt::print(stderr, "tc gemm: {}: {}\n", tc_status_string(r.status), r.error);
      throw CLI::RuntimeError(1);
    }
    fmt::print("gemm {}x{}x{} {}{} {} batch {}: {:.3f} ms, {:.3f} TFLOP/s, backend {} ({})\n", s.M,
               s.N, s.K, s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', opt->dtype, s.batch, r.seconds * 1e3,
               r.tflops, r.backend, r.instance);
    if (opt->check) fmt::print("rms_scaled vs float64 (sampled rows): {:.3e}\n", r.rms);
  });
}
