// tc_gemv_quantized / tc_gemm_quantized (and their _async forms on a stream): validate the
// descriptor and buffers once (nothing is written or queued on failure), then run the row. Both
// entry points share one table; the rows decide by M.
#include <cmath>
#include <vector>

#include "core/dispatch.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/internal.h"
#include "core/knobs.h"
#include "quant/matmul.h"
#include "quant/quant.h"
#ifdef TC_CUDA_HAVE_QUANT
#include "cuda/quant_rows.h"
#endif

using tc::fail;
namespace q = tc::quant;

namespace {

// Every bit of tc_quant_matmul_desc.flags that tc.h defines.
constexpr uint32_t kKnownFlags = TC_QUANT_WEIGHTS_CONSTANT;

bool is_half(tc_dtype_t t) {
  return t == TC_DTYPE_F16 || t == TC_DTYPE_BF16;
}

tc_status_t check_buffer(const tc_context_t* ctx, const tc_buffer_t* b, const char* name,
                         size_t need) {
  if (b == nullptr) return fail(TC_ERROR_NULL_POINTER, "{} is NULL", name);
  if (b->ctx != ctx) return fail(TC_ERROR_CONTEXT_MISMATCH, "{} belongs to another context", name);
  if (b->bytes < need) {
    return fail(TC_ERROR_BUFFER_TOO_SMALL, "{} has {} bytes but the descriptor needs {}", name,
                b->bytes, need);
  }
  return TC_SUCCESS;
}

tc_status_t validate(tc_context_t* ctx, const tc_quant_matmul_desc* d, tc_buffer_t* W,
                     tc_buffer_t* S, tc_buffer_t* X, tc_buffer_t* Y, q::MatmulProblem* p) {
  if (ctx == nullptr) return fail(TC_ERROR_NULL_POINTER, "ctx is NULL");
  if (d == nullptr) return fail(TC_ERROR_NULL_POINTER, "desc is NULL");
  if (d->M <= 0 || d->N <= 0 || d->K <= 0) {
    return fail(TC_ERROR_INVALID_SHAPE, "desc M, N, K = {}, {}, {} must all be positive", d->M,
                d->N, d->K);
  }
  const bool w_i8 = d->w_dtype == TC_DTYPE_I8;
  const q::FormatInfo* f = q::format_info(d->w_dtype);
  if (!w_i8 && f == nullptr) {
    return fail(TC_ERROR_UNSUPPORTED_DTYPE,
                "desc w_dtype = {} ({}) is not a quantized weight format (Q4_0, Q8_0, Q4_K, Q6_K, "
                "I8)",
                static_cast<int>(d->w_dtype), tc_dtype_name(d->w_dtype));
  }
  if (f != nullptr && d->K % f->block_elems != 0) {
    return fail(TC_ERROR_INVALID_SHAPE, "desc K = {} is not a multiple of the {} block size {}",
                d->K, f->name, f->block_elems);
  }
  if (d->x_dtype != TC_DTYPE_F32 && !is_half(d->x_dtype) && d->x_dtype != TC_DTYPE_Q8_0 &&
      !(d->x_dtype == TC_DTYPE_I8 && w_i8)) {
    return fail(TC_ERROR_UNSUPPORTED_DTYPE,
                "desc x_dtype = {} ({}) is not supported (F32, F16, BF16, Q8_0, or I8 with I8 "
                "weights)",
                static_cast<int>(d->x_dtype), tc_dtype_name(d->x_dtype));
  }
  if (d->x_dtype == TC_DTYPE_Q8_0 && d->K % 32 != 0) {
    return fail(TC_ERROR_INVALID_SHAPE,
                "desc K = {} is not a multiple of 32, the Q8_0 block size of x_dtype Q8_0", d->K);
  }
  if (d->y_dtype != TC_DTYPE_F32) {
    return fail(TC_ERROR_UNSUPPORTED_DTYPE, "desc y_dtype = {} ({}) is not supported (F32)",
                static_cast<int>(d->y_dtype), tc_dtype_name(d->y_dtype));
  }
  if ((d->flags & ~kKnownFlags) != 0) {
    return fail(TC_ERROR_INVALID_VALUE,
                "desc flags = {:#x} has bits {:#x} that no TC_QUANT_* flag defines (known: "
                "TC_QUANT_WEIGHTS_CONSTANT = {:#x})",
                d->flags, d->flags & ~kKnownFlags, kKnownFlags);
  }
  if (d->x_dtype == TC_DTYPE_I8 && !std::isfinite(d->x_scale)) {
    return fail(TC_ERROR_INVALID_VALUE, "desc x_scale = {} is not finite", d->x_scale);
  }
  const size_t M = static_cast<size_t>(d->M), N = static_cast<size_t>(d->N),
               K = static_cast<size_t>(d->K);
  const size_t w_bytes = N * (w_i8 ? K : q::row_bytes(*f, d->K));
  TC_TRY(check_buffer(ctx, W, "W", w_bytes));
  if (w_i8) {
    TC_TRY(check_buffer(ctx, S, "w_scales", N * sizeof(float)));
  } else if (S != nullptr) {
    return fail(TC_ERROR_INVALID_VALUE, "w_scales must be NULL for {} weights", f->name);
  }
  const size_t x_size = d->x_dtype == TC_DTYPE_I8 ? 1 : is_half(d->x_dtype) ? 2 : 4;
  const size_t x_bytes =
      d->x_dtype == TC_DTYPE_Q8_0 ? M * (K / 32 * sizeof(q::BlockQ8_0)) : M * K * x_size;
  TC_TRY(check_buffer(ctx, X, "X", x_bytes));
  TC_TRY(check_buffer(ctx, Y, "Y", M * N * sizeof(float)));
  p->d = *d;
  p->w = static_cast<const uint8_t*>(W->ptr);
  p->w_scales = S ? static_cast<const float*>(S->ptr) : nullptr;
  p->x = X->ptr;
  p->y = static_cast<float*>(Y->ptr);
  p->ctx = ctx;
  return TC_SUCCESS;
}

// X that the rows are not picked for: half precision (f16, bf16) or Q8_0 blocks (the form a
// decode engine's RMSNorm / SiLU-mul may write, as llama.cpp quantizes X before its GEMVs).
bool converted_x(tc_dtype_t t) {
  return is_half(t) || t == TC_DTYPE_Q8_0;
}

// The problem as the rows are picked for it: such X is served by the f32 rows (with the
// descriptor's quantize_activations), natively where a CUDA row reads it (quant_rows.h:
// run_converted_x), else after a pass that widens or dequantizes it to f32.
q::MatmulProblem as_f32_x(const q::MatmulProblem& p) {
  q::MatmulProblem p32 = p;
  if (converted_x(p32.d.x_dtype)) p32.d.x_dtype = TC_DTYPE_F32;
  return p32;
}

// Runs `row`, picked for as_f32_x(p); half-precision or Q8_0 X is read as it is by the CUDA rows
// that can, else converted to f32 first, in stream order (CPU: a host copy; CUDA: a kernel into
// the stream's workspace, quant_rows.h). A row that accepts X accepts the f32 copy too: it is at
// least as aligned.
tc_status_t execute(const q::MatmulProblem& p, const q::MatmulRow* row) {
  if (!converted_x(p.d.x_dtype)) return row->run(p);
#ifdef TC_CUDA_HAVE_QUANT
  if (p.ctx->device == TC_DEVICE_CUDA) return tc::cuda::quant_rows::run_converted_x(p, row);
#endif
  if (p.ctx->device != TC_DEVICE_CPU) {
    return fail(TC_ERROR_NOT_SUPPORTED, "{} activations on this device need the CUDA quant rows",
                tc_dtype_name(p.d.x_dtype));
  }
  std::vector<float> x(size_t(p.d.M) * p.d.K);
  if (p.d.x_dtype == TC_DTYPE_Q8_0) {  // rows of whole blocks, back to back: one run of blocks
    q::dequantize_row(TC_DTYPE_Q8_0, p.x, x.data(), int64_t(x.size()));
  } else {
    const auto* h = static_cast<const uint16_t*>(p.x);
    const bool bf16 = p.d.x_dtype == TC_DTYPE_BF16;
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = bf16 ? tc::bf16_to_f32(h[i]) : tc::f16_to_f32(h[i]);
  }
  q::MatmulProblem p32 = as_f32_x(p);
  p32.x = x.data();
  return row->run(p32);
}

tc_status_t run(tc_context_t* ctx, const tc_quant_matmul_desc* desc, tc_buffer_t* W, tc_buffer_t* S,
                tc_buffer_t* X, tc_buffer_t* Y) {
  const tc::knobs::Scope knob_scope;  // the rows' TC_* knobs: one look at the environment
  q::MatmulProblem p;
  TC_TRY(validate(ctx, desc, W, S, X, Y, &p));
  const q::MatmulRow* row = q::pick_matmul_row(as_f32_x(p));
  if (row == nullptr) return TC_ERROR_NOT_SUPPORTED;
  if (ctx->device == TC_DEVICE_CPU) {
    TC_TRY(execute(p, row));
  } else {  // device rows launch on the device's queue; run_sync waits for them
    TC_TRY(ctx->impl->run_sync([&](void* stream) {
      q::MatmulProblem on_stream = p;
      on_stream.stream = stream;
      return execute(on_stream, row);
    }));
  }
  tc::record_dispatch(row->backend, row->name);
  return TC_SUCCESS;
}

// The same on a stream: validated now (nothing queued on failure), run in stream order.
tc_status_t run_async(tc_context_t* ctx, const tc_quant_matmul_desc* desc, tc_buffer_t* W,
                      tc_buffer_t* S, tc_buffer_t* X, tc_buffer_t* Y, tc_stream_t* stream) {
  const tc::knobs::Scope knob_scope;  // the rows' TC_* knobs: one look at the environment
  q::MatmulProblem p;
  TC_TRY(validate(ctx, desc, W, S, X, Y, &p));
  if (stream == nullptr) return fail(TC_ERROR_NULL_POINTER, "stream is NULL");
  if (stream->ctx != ctx)
    return fail(TC_ERROR_CONTEXT_MISMATCH, "stream belongs to another context");
  const q::MatmulRow* row = q::pick_matmul_row(as_f32_x(p));
  if (row == nullptr) return TC_ERROR_NOT_SUPPORTED;
  p.stream = stream->impl->native();
  TC_TRY(stream->impl->submit([p, row] { return execute(p, row); }));
  tc::record_dispatch(row->backend, row->name);
  return TC_SUCCESS;
}

}  // namespace

extern "C" {

tc_status_t tc_gemv_quantized(tc_context_t* ctx, const tc_quant_matmul_desc* desc, tc_buffer_t* W,
                              tc_buffer_t* w_scales, tc_buffer_t* X, tc_buffer_t* Y) {
  return run(ctx, desc, W, w_scales, X, Y);
}

tc_status_t tc_gemm_quantized(tc_context_t* ctx, const tc_quant_matmul_desc* desc, tc_buffer_t* W,
                              tc_buffer_t* w_scales, tc_buffer_t* X, tc_buffer_t* Y) {
  return run(ctx, desc, W, w_scales, X, Y);
}

tc_status_t tc_gemv_quantized_async(tc_context_t* ctx, const tc_quant_matmul_desc* desc,
                                    tc_buffer_t* W, tc_buffer_t* w_scales, tc_buffer_t* X,
                                    tc_buffer_t* Y, tc_stream_t* stream) {
  return run_async(ctx, desc, W, w_scales, X, Y, stream);
}

tc_status_t tc_gemm_quantized_async(tc_context_t* ctx, const tc_quant_matmul_desc* desc,
                                    tc_buffer_t* W, tc_buffer_t* w_scales, tc_buffer_t* X,
                                    tc_buffer_t* Y, tc_stream_t* stream) {
  return run_async(ctx, desc, W, w_scales, X, Y, stream);
}

}  // extern "C"
