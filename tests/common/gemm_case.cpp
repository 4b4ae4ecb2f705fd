#include "common/gemm_case.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "common/reference.h"

namespace tc::test {

std::string describe(const GemmCase& c, const GemmDtypes& t) {
  return fmt::format("{}x{}x{} {}{} {}->{} alpha={} beta={} ld_pad={} batch={}{}{}{}", c.M, c.N,
                     c.K, c.ta ? 'T' : 'N', c.tb ? 'T' : 'N', tc_dtype_name(t.in),
                     tc_dtype_name(t.out), c.alpha, c.beta, c.ld_pad, c.batch,
                     c.broadcast_a ? " bcastA" : "", c.broadcast_b ? " bcastB" : "",
                     c.use_async ? " async" : "");
}

namespace {

struct Buf {
  tc_buffer_t* b = nullptr;
  ~Buf() {
    if (b) tc_buffer_free(b);
  }
};

}  // namespace

double run_gemm_case(tc_context_t* ctx, const GemmCase& c, const GemmDtypes& t,
                     std::mt19937_64& rng) {
  tc_gemm_desc d{};
  d.M = c.M, d.N = c.N, d.K = c.K;
  d.a_dtype = d.b_dtype = t.in;
  d.c_dtype = t.out;
  d.accum_dtype = t.accum;
  d.transpose_a = c.ta, d.transpose_b = c.tb;
  d.alpha = c.alpha, d.beta = c.beta;
  int64_t a_rows = c.ta ? c.K : c.M, a_cols = c.ta ? c.M : c.K;
  int64_t b_rows = c.tb ? c.N : c.K, b_cols = c.tb ? c.K : c.N;
  int64_t lda = a_cols + c.ld_pad, ldb = b_cols + c.ld_pad, ldc = c.N + c.ld_pad;
  if (c.ld_pad) d.lda = int32_t(lda), d.ldb = int32_t(ldb), d.ldc = int32_t(ldc);
  int64_t ext_a = (a_rows - 1) * lda + a_cols, ext_b = (b_rows - 1) * ldb + b_cols;
  int64_t ext_c = (c.M - 1) * ldc + c.N;
  // Batch strides leave a gap of 5 elements between entries, so strides differ from extents.
  int64_t sa = c.broadcast_a ? 0 : ext_a + 5, sb = c.broadcast_b ? 0 : ext_b + 5, sc = ext_c + 5;
  int64_t na = (c.batch - 1) * sa + ext_a, nb = (c.batch - 1) * sb + ext_b;
  int64_t nc = (c.batch - 1) * sc + ext_c;

  HostMatrix A = make_matrix(t.in, size_t(na)), B = make_matrix(t.in, size_t(nb));
  HostMatrix C = make_matrix(t.out, size_t(nc));
  fill_random(A, rng);
  fill_random(B, rng);
  if (c.beta == 0.0f)
    poison(C);
  else
    fill_random(C, rng);
  const HostMatrix C_before = C;

  Buf a, b, cb;
  EXPECT_EQ(tc_buffer_alloc(ctx, A.bytes.size(), &a.b), TC_SUCCESS) << tc_last_error_message();
  EXPECT_EQ(tc_buffer_alloc(ctx, B.bytes.size(), &b.b), TC_SUCCESS) << tc_last_error_message();
  EXPECT_EQ(tc_buffer_alloc(ctx, C.bytes.size(), &cb.b), TC_SUCCESS) << tc_last_error_message();
  if (!a.b || !b.b || !cb.b) return INFINITY;
  tc_buffer_write(a.b, 0, A.bytes.data(), A.bytes.size());
  tc_buffer_write(b.b, 0, B.bytes.data(), B.bytes.size());
  tc_buffer_write(cb.b, 0, C.bytes.data(), C.bytes.size());

  // One call of the form the case names; async forms queue on a fresh stream and sync it.
  const tc_gemm_batched_desc bd{d, c.batch, sa, sb, sc};
  auto call = [&](tc_stream_t* s) {
    if (c.batch > 1)
      return s ? tc_gemm_batched_async(ctx, &bd, a.b, b.b, cb.b, s)
               : tc_gemm_batched(ctx, &bd, a.b, b.b, cb.b);
    return s ? tc_gemm_async(ctx, &d, a.b, b.b, cb.b, s) : tc_gemm(ctx, &d, a.b, b.b, cb.b);
  };
  tc_status_t st;
  if (c.use_async) {
    tc_stream_t* s = nullptr;
    EXPECT_EQ(tc_stream_create(ctx, &s), TC_SUCCESS);
    st = call(s);
    tc_status_t synced = tc_stream_sync(s);
    if (st == TC_SUCCESS) st = synced;
    tc_stream_destroy(s);
  } else {
    st = call(nullptr);
  }
  EXPECT_EQ(st, TC_SUCCESS) << describe(c, t) << ": " << tc_last_error_message();
  if (st != TC_SUCCESS) return INFINITY;
  tc_buffer_read(cb.b, 0, C.bytes.data(), C.bytes.size());

  // Everything outside the M x N blocks (ld padding, gaps between batch entries) is unchanged.
  const size_t es = tc_dtype_size(t.out);
  for (int64_t i = 0; i < nc; ++i) {
    int64_t in_entry = i % sc, r = in_entry / ldc, col = in_entry % ldc;
    bool inside = i / sc < c.batch && in_entry < ext_c && col < c.N && r < c.M;
    if (!inside && std::memcmp(&C.bytes[i * es], &C_before.bytes[i * es], es) != 0) {
      ADD_FAILURE() << describe(c, t) << ": element " << i << " outside C was written";
      return -1;
    }
  }
  double worst = 0;
  std::vector<double> ref;
  for (int32_t bi = 0; bi < c.batch; ++bi) {
    reference_gemm(d, A, size_t(bi * sa), B, size_t(bi * sb), C_before, size_t(bi * sc), ref);
    double e = rms_scaled(C, size_t(bi * sc), c.M, c.N, ldc, ref);
    if (std::isnan(e)) return INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

}  // namespace tc::test
