// The CUDA GEMM benchmark's cases (issue 3 / the GEMM document's sweep):
//  - sweep: square sizes 256..4096 (8192 with --large) in f16, bf16, f32 (exact), tf32, i8;
//  - shapes: bf16 4095x4097x4099 (unaligned), 1000^3, 127x4096x4096, 8192x128x8192, NT and TN
//    4096^3, batched 32 x 512^3;
//  - decode: f16 linear layers Y[M,N] = X[M,K] W[N,K]^T, M = 1..32, W in {4096x4096,
//    14336x4096, 4096x14336}, reported as GB/s of weight reads.
// i8 cells use the NT layout (B stored N x K), the only one cuBLASLt's integer kernels take, so
// the peer runs the same problem.
#pragma once

#include <tc/tc.h>

#include <string>
#include <vector>

namespace tc::bench {

struct GemmCase {
  std::string table;  // sweep | shapes | decode
  std::string label;  // "bf16 4096^3 NT", "M=8 W 14336x4096"
  std::string dtype;  // f16 | bf16 | f32 | tf32 | i8
  int M = 0, N = 0, K = 0, batch = 1;
  bool ta = false, tb = false;
  bool bandwidth = false;  // report GB/s of B (weights) instead of TFLOP/s
};

struct CaseOptions {
  std::vector<std::string> suites{"sweep", "shapes", "decode"};
  std::vector<int> sizes{256, 512, 1024, 2048, 4096};
  std::vector<std::string> dtypes{"f16", "bf16", "f32", "tf32", "i8"};
  bool large = false;  // adds 8192 to the sweep
};

std::vector<GemmCase> gemm_cases(const CaseOptions& o);

// Input/output dtypes of a case's dtype name; false for unknown names.
bool case_dtypes(const std::string& name, tc_dtype_t* in, tc_dtype_t* out, tc_dtype_t* accum);

}  // namespace tc::bench
