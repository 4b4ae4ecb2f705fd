// The `tc` command: info, one-off GEMMs with checking, benchmarks, and the quantized/GGUF tools.
#include <tc/tc.h>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tc — tensor compute: GEMM, quantized kernels and ML ops on CPU and CUDA"};
  app.require_subcommand(1);
  tc_cli_add_info(app);
  tc_cli_add_gemm(app);
  tc_cli_add_bench(app);
#ifdef TC_CLI_HAS_QUANT
  tc_cli_add_quant(app);
#endif
#ifdef TC_CLI_HAS_GGUF
  tc_cli_add_gguf(app);
#endif
#ifdef TC_CLI_HAS_BENCH_QUANT
  tc_cli_add_bench_quant(app);  // `tc bench quant`, `tc bench decode`
#endif
  CLI11_PARSE(app, argc, argv);
  return 0;
}
