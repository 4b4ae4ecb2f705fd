// Runs one GEMM shape through the public API with random inputs: timing (median of repeats of
// a batch of async launches on one stream) and an optional float64 check on sampled rows.
#pragma once

#include <tc/tc.h>

#include <string>

namespace tc::cli {

struct GemmSpec {
  int M = 1024, N = 1024, K = 1024;
  tc_dtype_t in = TC_DTYPE_F32, out = TC_DTYPE_F32, accum = TC_DTYPE_F32;
  bool ta = false, tb = false;
  int batch = 1;
};

struct GemmResult {
  tc_status_t status = TC_SUCCESS;
  std::string error;
  double seconds = 0;  // median time of one GEMM (whole batch)
  double tflops = 0;   // 2*M*N*K*batch / seconds / 1e12
  double rms = -1;     // rms_scaled vs float64 on sampled rows (-1 when not checked)
  std::string backend, instance;
};

// Parses "f32", "f16", "bf16", "i8" (or "tf32": f32 inputs with accum TF32) into spec dtypes.
bool parse_dtype(const std::string& name, GemmSpec& spec);

// `min_seconds`: keep repeating until this much time was measured (at least `min_reps`).
GemmResult run_gemm(tc_context_t* ctx, const GemmSpec& spec, bool check, double min_seconds,
                    int min_reps);

// cblas_sgemm called directly on the same shape (the CPU peer), median seconds.
double time_openblas_sgemm(const GemmSpec& spec, double min_seconds, int min_reps);

}  // namespace tc::cli
