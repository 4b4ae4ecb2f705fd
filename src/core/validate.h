// Descriptor validation, in one place for every backend: a call that passes may be assumed valid
// by the kernels (positive shapes, resolved leading dimensions, every element in bounds).
#pragma once

#include "core/dispatch.h"

namespace tc {

// Checks the arguments of tc_gemm / tc_gemm_async / tc_gemm_batched and fills `out`.
// `stream` may be nullptr (synchronous calls). On failure sets the message; writes nothing.
tc_status_t validate_gemm(tc_context* ctx, const tc_gemm_batched_desc& bd, tc_buffer* A,
                          tc_buffer* B, tc_buffer* C, const tc_stream* stream, GemmProblem* out);

}  // namespace tc
