// CPU float GEMM: OpenBLAS sgemm for f32, and f16/bf16 by converting operand panels to f32 and
// calling the same sgemm. Conversion costs O(MK + KN + MN) against O(MNK) for the product, so
// at 1024^3 it is ~0.3% of the arithmetic; a native bf16 kernel would have to beat OpenBLAS's
// f32 kernel, which on AVX2 it cannot (no bf16 dot instructions), so this is the row.
#include "cpu/gemm.h"

#include <cblas.h>

#include <vector>

#include "cpu/convert.h"
#include "cpu/thread_pool.h"

namespace tc::cpu {
namespace {

CBLAS_TRANSPOSE trans(bool t) {
  return t ? CblasTrans : CblasNoTrans;
}

size_t esize(tc_dtype_t t) {
  return tc_dtype_size(t);
}

// Converts a rows x cols matrix with leading dimension ld into a packed f32 matrix.
void convert_matrix(tc_dtype_t t, const void* src, int64_t rows, int64_t cols, int64_t ld,
                    float* dst) {
  const char* s = static_cast<const char*>(src);
  parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      to_f32(t, s + r * ld * esize(t), dst + r * cols, size_t(cols));
  });
}

void store_matrix(tc_dtype_t t, const float* src, int64_t rows, int64_t cols, void* dst,
                  int64_t ld) {
  char* d = static_cast<char*>(dst);
  parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      from_f32(t, src + r * cols, d + r * ld * esize(t), size_t(cols));
  });
}

}  // namespace

bool sgemm_can_run(const GemmProblem& p, std::string& why) {
  if (p.d.a_dtype != TC_DTYPE_F32) {
    why = "inputs are not f32";
    return false;
  }
  return true;
}

tc_status_t sgemm_run(const GemmProblem& p) {
  const auto& d = p.d;
  const float* a = static_cast<const float*>(p.a);
  const float* b = static_cast<const float*>(p.b);
  float* c = static_cast<float*>(p.c);
  for (int32_t i = 0; i < p.batch; ++i)
    cblas_sgemm(CblasRowMajor, trans(d.transpose_a), trans(d.transpose_b), d.M, d.N, d.K, d.alpha,
                a + i * p.stride_a, d.lda, b + i * p.stride_b, d.ldb, d.beta, c + i * p.stride_c,
                d.ldc);
  return TC_SUCCESS;
}

bool half_can_run(const GemmProblem& p, std::string& why) {
  if (p.d.a_dtype != TC_DTYPE_F16 && p.d.a_dtype != TC_DTYPE_BF16) {
    why = "inputs are not f16/bf16";
    return false;
  }
  return true;
}

tc_status_t half_run(const GemmProblem& p) {
  const auto& d = p.d;
  int64_t a_rows = d.transpose_a ? d.K : d.M, a_cols = d.transpose_a ? d.M : d.K;
  int64_t b_rows = d.transpose_b ? d.N : d.K, b_cols = d.transpose_b ? d.K : d.N;
  std::vector<float> a32(size_t(a_rows * a_cols)), b32(size_t(b_rows * b_cols));
  const bool c_is_f32 = d.c_dtype == TC_DTYPE_F32;
  std::vector<float> c32(c_is_f32 ? 0 : size_t(d.M) * size_t(d.N));
  const size_t es = esize(d.a_dtype), cs = esize(d.c_dtype);
  for (int32_t i = 0; i < p.batch; ++i) {
    const char* a = static_cast<const char*>(p.a) + i * p.stride_a * es;
    const char* b = static_cast<const char*>(p.b) + i * p.stride_b * es;
    char* c = static_cast<char*>(p.c) + i * p.stride_c * cs;
    if (i == 0 || p.stride_a != 0) convert_matrix(d.a_dtype, a, a_rows, a_cols, d.lda, a32.data());
    if (i == 0 || p.stride_b != 0) convert_matrix(d.b_dtype, b, b_rows, b_cols, d.ldb, b32.data());
    if (c_is_f32) {
      cblas_sgemm(CblasRowMajor, trans(d.transpose_a), trans(d.transpose_b), d.M, d.N, d.K, d.alpha,
                  a32.data(), int(a_cols), b32.data(), int(b_cols), d.beta,
                  reinterpret_cast<float*>(c), d.ldc);
      continue;
    }
    if (d.beta != 0.0f) convert_matrix(d.c_dtype, c, d.M, d.N, d.ldc, c32.data());
    cblas_sgemm(CblasRowMajor, trans(d.transpose_a), trans(d.transpose_b), d.M, d.N, d.K, d.alpha,
                a32.data(), int(a_cols), b32.data(), int(b_cols), d.beta, c32.data(), d.N);
    store_matrix(d.c_dtype, c32.data(), d.M, d.N, c, d.ldc);
  }
  return TC_SUCCESS;
}

}  // namespace tc::cpu
