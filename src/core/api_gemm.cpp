// tc_gemm, tc_gemm_async, tc_gemm_batched: validate once, pick a row, run it on the device's
// default queue (synchronous) or on a stream. A call is one knobs::Scope: the rows' planners and
// launchers read their TC_* knobs from one check of the environment (core/knobs.h).
#include "core/dispatch.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/validate.h"

namespace {

tc_gemm_batched_desc single(const tc_gemm_desc& d) {
  tc_gemm_batched_desc bd{};
  bd.base = d;
  bd.batch = 1;
  return bd;
}

tc_status_t run_sync(tc_context* ctx, const tc_gemm_batched_desc& bd, tc_buffer* A, tc_buffer* B,
                     tc_buffer* C) {
  const tc::knobs::Scope knob_scope;
  tc::GemmProblem p;
  TC_TRY(tc::validate_gemm(ctx, bd, A, B, C, nullptr, &p));
  const tc::GemmRow* row = tc::pick_gemm_row(p);
  if (row == nullptr) return TC_ERROR_NOT_SUPPORTED;
  TC_TRY(ctx->impl->run_sync([&](void* stream) {
    tc::GemmProblem q = p;
    q.stream = stream;
    return row->run(q);
  }));
  tc::record_dispatch(row->backend, row->name);
  return TC_SUCCESS;
}

tc_status_t run_async(tc_context* ctx, const tc_gemm_batched_desc& bd, tc_buffer* A, tc_buffer* B,
                      tc_buffer* C, tc_stream* stream) {
  if (stream == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument stream is NULL");
  const tc::knobs::Scope knob_scope;
  tc::GemmProblem p;
  TC_TRY(tc::validate_gemm(ctx, bd, A, B, C, stream, &p));
  const tc::GemmRow* row = tc::pick_gemm_row(p);
  if (row == nullptr) return TC_ERROR_NOT_SUPPORTED;
  p.stream = stream->impl->native();
  // A stream with a native handle (CUDA) runs the work inside submit() (internal.h), so the
  // work may refer to p: two pointers fit std::function's own storage, where a copy of p would
  // be a heap allocation per call. Other streams (the CPU's worker) run it later: a copy.
  if (p.stream != nullptr)
    TC_TRY(stream->impl->submit([&p, row] { return row->run(p); }));
  else
    TC_TRY(stream->impl->submit([p, row] { return row->run(p); }));
  tc::record_dispatch(row->backend, row->name);
  return TC_SUCCESS;
}

}  // namespace

extern "C" {

tc_status_t tc_gemm(tc_context_t* ctx, const tc_gemm_desc* desc, tc_buffer_t* A, tc_buffer_t* B,
                    tc_buffer_t* C) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (desc == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument desc is NULL");
  return run_sync(ctx, single(*desc), A, B, C);
}

tc_status_t tc_gemm_batched(tc_context_t* ctx, const tc_gemm_batched_desc* desc, tc_buffer_t* A,
                            tc_buffer_t* B, tc_buffer_t* C) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (desc == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument desc is NULL");
  return run_sync(ctx, *desc, A, B, C);
}

tc_status_t tc_gemm_async(tc_context_t* ctx, const tc_gemm_desc* desc, tc_buffer_t* A,
                          tc_buffer_t* B, tc_buffer_t* C, tc_stream_t* stream) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (desc == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument desc is NULL");
  return run_async(ctx, single(*desc), A, B, C, stream);
}

tc_status_t tc_gemm_batched_async(tc_context_t* ctx, const tc_gemm_batched_desc* desc,
                                  tc_buffer_t* A, tc_buffer_t* B, tc_buffer_t* C,
                                  tc_stream_t* stream) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (desc == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument desc is NULL");
  return run_async(ctx, *desc, A, B, C, stream);
}

}  // extern "C"
