// `tc info`: version, backends compiled in, devices present, CPU features.
#include <fmt/format.h>
#include <tc/tc.h>

#include <string>

#include "commands.h"

namespace {

std::string cpu_features(uint32_t f) {
  std::string s;
  const struct {
    uint32_t bit;
    const char* name;
  } names[] = {{TC_CPU_AVX2, "avx2"},         {TC_CPU_FMA, "fma"},
               {TC_CPU_F16C, "f16c"},         {TC_CPU_AVX512F, "avx512f"},
               {TC_CPU_AVX512BW, "avx512bw"}, {TC_CPU_AVX512VNNI, "avx512vnni"},
               {TC_CPU_AVXVNNI, "avxvnni"},   {TC_CPU_AVX512BF16, "avx512bf16"}};
  for (auto& n : names)
    if (f & n.bit) s += std::string(s.empty() ? "" : " ") + n.name;
  return s.empty() ? "(none: scalar kernels)" : s;
}

void print_device(tc_device_t kind) {
  tc_context_t* ctx = nullptr;
  if (tc_context_create(&ctx, kind) != TC_SUCCESS) {
    fmt::print("  {}: unavailable ({})\n", kind == TC_DEVICE_CPU ? "cpu" : "cuda",
               tc_last_error_message());
    return;
  }
  tc_device_info info;
  tc_context_device_info(ctx, &info);
  if (kind == TC_DEVICE_CPU) {
    fmt::print("  cpu: {} — {} threads, {:.1f} GiB RAM\n", info.name, info.compute_units,
               info.memory_bytes / double(1ull << 30));
    fmt::print("       features: {}\n", cpu_features(info.cpu_features));
  } else {
    fmt::print("  cuda: {} — sm_{}{}, {} SMs, {:.1f} GiB, L2 {:.0f} MiB\n", info.name,
               info.cc_major, info.cc_minor, info.compute_units,
               info.memory_bytes / double(1ull << 30), info.l2_bytes / double(1 << 20));
  }
  tc_context_destroy(ctx);
}

}  // namespace

void tc_cli_add_info(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Version, backends, devices and CPU features");
  cmd->callback([] {
    fmt::print("tc {}\n", tc_version_string());
#ifdef TC_HAVE_CUDA
    fmt::print("backends built: cpu (OpenBLAS + own kernels), cuda (own kernels + cuBLASLt)\n");
#else
    fmt::print("backends built: cpu (OpenBLAS + own kernels); cuda not built\n");
#endif
    fmt::print("devices:\n");
    print_device(TC_DEVICE_CPU);
    if (tc_device_available(TC_DEVICE_CUDA))
      print_device(TC_DEVICE_CUDA);
    else
      fmt::print("  cuda: no CUDA device\n");
  });
}
