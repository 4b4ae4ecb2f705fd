// The lab's cases: which own kernel family runs, on which problem, checked and/or timed.
#pragma once

#include <string>
#include <vector>

#include "cuda/gemm_kernels.h"
#include "lab_util.h"

namespace lab {

enum class Kind { wgmma, mma, skinny, f32, tf32x3 };

struct Case {
  std::string name;
  Kind kind = Kind::wgmma;
  tc_gemm_desc d{};
  int batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  size_t a_offset = 0, b_offset = 0, c_offset = 0;  // bytes: misaligned pointers
  bool timed = false;
  bool decode = false;  // report GB/s of B (the weights) instead of TFLOP/s
  int variant = 0;      // GemmProblem::variant (wgmma: fixed BM / BN / split-K)
  // "NAME=VALUE" set for this case only (same-run A/B of a knob: TC_WGMMA_EPILOGUE=direct,
  // TC_GEMM_PDL=0); the lab clears those knobs before every case.
  std::string env;

  tc::GemmProblem problem() const {
    tc::GemmProblem p;
    p.d = d;
    p.batch = batch;
    p.stride_a = stride_a;
    p.stride_b = stride_b;
    p.stride_c = stride_c;
    p.variant = variant;
    return p;
  }
  size_t extent(int64_t rows, int64_t ld, int64_t stride, tc_dtype_t t) const {
    return size_t((batch > 1 ? (batch - 1) * stride : 0) + rows * ld) * dsize(t);
  }
  size_t bytes_a() const { return extent(d.transpose_a ? d.K : d.M, d.lda, stride_a, d.a_dtype); }
  size_t bytes_b() const { return extent(d.transpose_b ? d.N : d.K, d.ldb, stride_b, d.b_dtype); }
  size_t bytes_c() const { return extent(d.M, d.ldc, stride_c, d.c_dtype); }
};

struct Instance {
  std::string name;
  size_t workspace_bytes = 0;
  tc::cuda::GemmPlan plan;
};

const std::vector<Case>& lab_cases();
bool plan_case(const Case& c, const tc::GemmProblem& p, const tc::cuda::GemmDevice& dev,
               Instance* inst, std::string& why);
tc_status_t run_case(const Case& c, const tc::GemmProblem& p, const Instance& inst, void* ws);

}  // namespace lab
