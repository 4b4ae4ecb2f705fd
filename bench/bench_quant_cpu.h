// CPU benchmark of the quantized GEMV kernels against a streaming read (for `tc bench quant`).
#pragma once

#include <tc/tc.h>

#include <cstdio>
#include <string>
#include <vector>

namespace tc::bench {

struct QuantBenchRow {
  std::string format;    // "q4_0"
  std::string instance;  // dispatch row that ran
  int M, N, K;
  bool act8;         // activations quantized to 8 bits
  double us;         // median time per call
  double gbps;       // weight bytes / median time
  double best_gbps;  // weight bytes / fastest call
};

struct QuantBenchReport {
  double stream_gbps = 0;         // read bandwidth with every core, best repetition
  double stream_median_gbps = 0;  // the same, median repetition
  std::vector<QuantBenchRow> rows;
};

// Runs GEMV M in `ms` for Q4_0, Q8_0, Q4_K on N x K weights rotated through enough copies to
// exceed the last-level cache, with f32 and 8-bit activations. Returns false (message set)
// on an API error.
bool bench_quant_cpu(int N, int K, const std::vector<int>& ms, double seconds_per_case,
                     QuantBenchReport* out);
void print_quant_report(const QuantBenchReport& r, std::FILE* f);

}  // namespace tc::bench
