// The quantized benchmarks on CUDA (issue 4): `tc bench decode` (the synthetic Llama-2-7B decode
// step, one CUDA graph per step) and `tc bench quant` (each kernel's GB/s for decode shapes,
// hot and rotated, and TFLOP/s for prefill). Both print a table and return the figures as JSON.
#pragma once

#include <tc/tc.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tc::bench {

struct DecodeBenchOptions {
  std::vector<std::string> formats{"q4_0", "q8_0", "q4_k"};
  std::vector<int> batches{1, 2, 4, 8, 16, 32};
  // Activation types: "f32" (X f32, exact and 8-bit cells), "f16", "bf16" (X in half
  // precision, 8-bit cells).
  std::vector<std::string> x{"f32", "f16"};
  int layers = 32;
  double seconds = 0.3;    // GPU time per cell
  bool per_shape = false;  // also each layer shape alone (µs a launch)
};

// Copy bandwidth (bytes read + written per second) of a cudaMemcpy D2D of 1 GiB; 0 on failure.
double copy_bandwidth_gbps(tc_context_t* ctx, void* stream);

nlohmann::json run_decode_bench(tc_context_t* ctx, const DecodeBenchOptions& o);

struct QuantKernelBenchOptions {
  std::vector<std::string> formats{"q4_0", "q8_0", "q4_k"};
  std::vector<int> ms{1, 8, 16, 32};
  int prefill_m = 512;
  double seconds = 0.2;
};

nlohmann::json run_quant_kernel_bench(tc_context_t* ctx, const QuantKernelBenchOptions& o);

// "q4_0" -> TC_DTYPE_Q4_0 ...; TC_DTYPE_F32 for an unknown name.
tc_dtype_t quant_format_from_name(const std::string& name);

}  // namespace tc::bench
