// CPU GEMM rows of the dispatch table (src/core/gemm_table.cpp).
#pragma once

#include "core/dispatch.h"

namespace tc::cpu {

// f32 through OpenBLAS cblas_sgemm (TF32 requests run in full f32 here).
bool sgemm_can_run(const GemmProblem& p, std::string& why);
tc_status_t sgemm_run(const GemmProblem& p);

// f16 / bf16 inputs: panels converted to f32 with SIMD, then cblas_sgemm; C converted back.
bool half_can_run(const GemmProblem& p, std::string& why);
tc_status_t half_run(const GemmProblem& p);

// int8 x int8 -> int32, exact up to K = 65536 (and beyond: |a*b| <= 2^14, so 2^17 terms fit).
bool i8_avx512vnni_can_run(const GemmProblem& p, std::string& why);
tc_status_t i8_avx512vnni_run(const GemmProblem& p);
bool i8_avx2_can_run(const GemmProblem& p, std::string& why);
tc_status_t i8_avx2_run(const GemmProblem& p);
bool i8_scalar_can_run(const GemmProblem& p, std::string& why);
tc_status_t i8_scalar_run(const GemmProblem& p);

}  // namespace tc::cpu
