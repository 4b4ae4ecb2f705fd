#include "core/validate.h"

#include <climits>

#include "core/error.h"

namespace tc {
namespace {

bool is_dtype(tc_dtype_t t) {
  return t == TC_DTYPE_F32 || t == TC_DTYPE_F16 || t == TC_DTYPE_BF16 || t == TC_DTYPE_I8 ||
         t == TC_DTYPE_I32 || t == TC_DTYPE_TF32 || t == TC_DTYPE_Q4_0 || t == TC_DTYPE_Q8_0 ||
         t == TC_DTYPE_Q4_K || t == TC_DTYPE_Q6_K;
}

tc_status_t check_dtypes(const tc_gemm_desc& d) {
  const struct {
    const char* name;
    tc_dtype_t v;
  } fields[] = {{"a_dtype", d.a_dtype},
                {"b_dtype", d.b_dtype},
                {"c_dtype", d.c_dtype},
                {"accum_dtype", d.accum_dtype}};
  for (auto& f : fields)
    if (!is_dtype(f.v))
      return fail(TC_ERROR_INVALID_VALUE, "desc->{} is {}, which is not a tc_dtype_t", f.name,
                  int(f.v));
  if (d.a_dtype != d.b_dtype)
    return fail(TC_ERROR_UNSUPPORTED_DTYPE,
                "desc->a_dtype is {} but desc->b_dtype is {}; GEMM "
                "needs equal input dtypes",
                tc_dtype_name(d.a_dtype), tc_dtype_name(d.b_dtype));
  auto combo = [&](const char* want) {
    return fail(TC_ERROR_UNSUPPORTED_DTYPE,
                "dtypes a={} b={} c={} accum={} are not supported; with {} inputs use {}",
                tc_dtype_name(d.a_dtype), tc_dtype_name(d.b_dtype), tc_dtype_name(d.c_dtype),
                tc_dtype_name(d.accum_dtype), tc_dtype_name(d.a_dtype), want);
  };
  switch (d.a_dtype) {
    case TC_DTYPE_F32:
      if (d.c_dtype != TC_DTYPE_F32 ||
          (d.accum_dtype != TC_DTYPE_F32 && d.accum_dtype != TC_DTYPE_TF32))
        return combo("c=f32, accum=f32 or tf32");
      return TC_SUCCESS;
    case TC_DTYPE_F16:
    case TC_DTYPE_BF16:
      if ((d.c_dtype != d.a_dtype && d.c_dtype != TC_DTYPE_F32) || d.accum_dtype != TC_DTYPE_F32)
        return combo("c=the input dtype or f32, accum=f32");
      return TC_SUCCESS;
    case TC_DTYPE_I8:
      if (d.c_dtype != TC_DTYPE_I32 || d.accum_dtype != TC_DTYPE_I32)
        return combo("c=i32, accum=i32");
      if (d.alpha != 1.0f || (d.beta != 0.0f && d.beta != 1.0f))
        return fail(
            TC_ERROR_INVALID_VALUE,
            "desc->alpha is {} and desc->beta is {}; i8 GEMM needs alpha = 1 and beta 0 or 1",
            d.alpha, d.beta);
      return TC_SUCCESS;
    default:
      return fail(TC_ERROR_UNSUPPORTED_DTYPE,
                  "desc->a_dtype is {}; tc_gemm takes f32, f16, bf16 or i8 inputs (quantized "
                  "weights go through tc_gemm_quantized)",
                  tc_dtype_name(d.a_dtype));
  }
}

// Elements from the first to one past the last element an operand of `rows` x `cols` (as
// stored) with leading dimension `ld` touches.
int64_t extent(int64_t rows, int64_t cols, int64_t ld) {
  return (rows - 1) * ld + cols;
}

struct Operand {
  const char* name;  // "A"
  const char* ld_name;
  const char* stride_name;
  int64_t rows, cols;  // as stored
  int32_t ld;
  int64_t stride;
  tc_buffer* buf;
  tc_dtype_t dtype;
};

tc_status_t check_operand(const Operand& o, int32_t batch, tc_context* ctx) {
  if (o.buf == nullptr) return fail(TC_ERROR_NULL_POINTER, "argument {} is NULL", o.name);
  if (o.buf->ctx != ctx)
    return fail(TC_ERROR_CONTEXT_MISMATCH, "argument {} belongs to another context", o.name);
  if (o.ld < o.cols)
    return fail(TC_ERROR_INVALID_LD, "desc->{} is {}, smaller than the {} columns of {} as stored",
                o.ld_name, o.ld, o.cols, o.name);
  int64_t ext = extent(o.rows, o.cols, o.ld);
  if (ext > INT32_MAX)
    return fail(TC_ERROR_INVALID_SHAPE,
                "{} spans {} elements ({} rows, ld {}), beyond 32-bit "
                "indexing",
                o.name, ext, o.rows, o.ld);
  if (o.stride < 0)
    return fail(TC_ERROR_INVALID_VALUE, "desc->{} is {}; strides must be >= 0", o.stride_name,
                o.stride);
  // (batch-1)*stride < 2^31 * 2^31: no int64 overflow.
  if (o.stride > INT64_MAX / 4 / (batch > 1 ? batch : 1))
    return fail(TC_ERROR_INVALID_VALUE, "desc->{} is {}, too large", o.stride_name, o.stride);
  int64_t total = int64_t(batch - 1) * o.stride + ext;
  size_t need = size_t(total) * tc_dtype_size(o.dtype);
  if (need > o.buf->bytes)
    return fail(TC_ERROR_BUFFER_TOO_SMALL,
                "argument {} holds {} bytes but the descriptor reaches "
                "{} bytes",
                o.name, o.buf->bytes, need);
  return TC_SUCCESS;
}

}  // namespace

tc_status_t validate_gemm(tc_context* ctx, const tc_gemm_batched_desc& bd, tc_buffer* A,
                          tc_buffer* B, tc_buffer* C, const tc_stream* stream, GemmProblem* out) {
  const tc_gemm_desc& d = bd.base;
  if (d.M <= 0) return fail(TC_ERROR_INVALID_SHAPE, "desc->M is {}; it must be > 0", d.M);
  if (d.N <= 0) return fail(TC_ERROR_INVALID_SHAPE, "desc->N is {}; it must be > 0", d.N);
  if (d.K <= 0) return fail(TC_ERROR_INVALID_SHAPE, "desc->K is {}; it must be > 0", d.K);
  if (bd.batch <= 0)
    return fail(TC_ERROR_INVALID_SHAPE, "desc->batch is {}; it must be > 0", bd.batch);
  if (d.lda < 0) return fail(TC_ERROR_INVALID_LD, "desc->lda is {}; it must be >= 0", d.lda);
  if (d.ldb < 0) return fail(TC_ERROR_INVALID_LD, "desc->ldb is {}; it must be >= 0", d.ldb);
  if (d.ldc < 0) return fail(TC_ERROR_INVALID_LD, "desc->ldc is {}; it must be >= 0", d.ldc);
  TC_TRY(check_dtypes(d));
  if (stream != nullptr && stream->ctx != ctx)
    return fail(TC_ERROR_CONTEXT_MISMATCH, "argument stream belongs to another context");

  GemmProblem p;
  p.d = d;
  // Stored shapes: A is M x K (K x M when transposed), B is K x N (N x K), C is M x N.
  int64_t a_rows = d.transpose_a ? d.K : d.M, a_cols = d.transpose_a ? d.M : d.K;
  int64_t b_rows = d.transpose_b ? d.N : d.K, b_cols = d.transpose_b ? d.K : d.N;
  if (p.d.lda == 0) p.d.lda = int32_t(a_cols);
  if (p.d.ldb == 0) p.d.ldb = int32_t(b_cols);
  if (p.d.ldc == 0) p.d.ldc = d.N;
  TC_TRY(check_operand({"A", "lda", "stride_a", a_rows, a_cols, p.d.lda, bd.stride_a, A, d.a_dtype},
                       bd.batch, ctx));
  TC_TRY(check_operand({"B", "ldb", "stride_b", b_rows, b_cols, p.d.ldb, bd.stride_b, B, d.b_dtype},
                       bd.batch, ctx));
  TC_TRY(check_operand({"C", "ldc", "stride_c", d.M, d.N, p.d.ldc, bd.stride_c, C, d.c_dtype},
                       bd.batch, ctx));
  if (bd.batch > 1) {
    // Outputs must not overlap: either each C lies wholly past the previous one, or the
    // batches interleave inside one row pitch (stride >= N and all of them fit in ldc).
    int64_t ext_c = extent(d.M, d.N, p.d.ldc);
    bool disjoint = bd.stride_c >= ext_c ||
                    (bd.stride_c >= d.N && int64_t(bd.batch - 1) * bd.stride_c + d.N <= p.d.ldc);
    if (!disjoint)
      return fail(TC_ERROR_OVERLAP,
                  "desc->stride_c is {}: the {} outputs of {} x {} (ldc {}) "
                  "overlap",
                  bd.stride_c, bd.batch, d.M, d.N, p.d.ldc);
  }
  p.batch = bd.batch;
  p.stride_a = bd.stride_a;
  p.stride_b = bd.stride_b;
  p.stride_c = bd.stride_c;
  p.a = A->ptr;
  p.b = B->ptr;
  p.c = C->ptr;
  p.ctx = ctx;
  *out = p;
  return TC_SUCCESS;
}

}  // namespace tc
