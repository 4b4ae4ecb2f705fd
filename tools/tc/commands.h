// Subcommands of the `tc` command; each file adds its own to the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

void tc_cli_add_info(CLI::App& app);
void tc_cli_add_gemm(CLI::App& app);
void tc_cli_add_bench(CLI::App& app);
// Optional families (defined when their files are built; see tools/tc/CMakeLists.txt).
void tc_cli_add_quant(CLI::App& app);
void tc_cli_add_gguf(CLI::App& app);
void tc_cli_add_bench_quant(CLI::App& app);  // adds under the existing `bench`
