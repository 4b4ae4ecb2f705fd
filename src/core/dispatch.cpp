#include "core/dispatch.h"

#include <fmt/format.h>

#include "core/env.h"
#include "core/error.h"

namespace tc {
namespace {
thread_local tc_backend_t t_backend = TC_BACKEND_NONE;
thread_local const char* t_instance = "";

bool backend_on_device(tc_backend_t b, tc_device_t dev) {
  bool cuda = b == TC_BACKEND_CUDA || b == TC_BACKEND_CUBLASLT;
  return cuda == (dev == TC_DEVICE_CUDA);
}
}  // namespace

void record_dispatch(tc_backend_t backend, const char* instance) {
  t_backend = backend;
  t_instance = instance;
}

const GemmRow* pick_gemm_row(const GemmProblem& p) {
  const bool debug = env::log_debug();
  std::string skipped;
  for (const GemmRow& row : gemm_table()) {
    std::string why;
    if (!backend_on_device(row.backend, p.ctx->device)) continue;
    if (!row.can_run(p, why)) {
      if (debug) skipped += fmt::format(" {} ({});", row.name, why);
      continue;
    }
    if (debug)
      log_debug(fmt::format("gemm {}x{}x{} {}{} {}: ran {}; skipped:{}", p.d.M, p.d.N, p.d.K,
                            p.d.transpose_a ? 'T' : 'N', p.d.transpose_b ? 'T' : 'N',
                            tc_dtype_name(p.d.a_dtype), row.name,
                            skipped.empty() ? " none" : skipped));
    return &row;
  }
  fail(TC_ERROR_NOT_SUPPORTED, "no GEMM kernel on this device serves {}x{}x{} with {} inputs",
       p.d.M, p.d.N, p.d.K, tc_dtype_name(p.d.a_dtype));
  return nullptr;
}

}  // namespace tc

extern "C" {

tc_backend_t tc_last_backend(void) {
  return tc::t_backend;
}
const char* tc_last_instance(void) {
  return tc::t_instance;
}

const char* tc_backend_name(tc_backend_t backend) {
  switch (backend) {
    case TC_BACKEND_NONE:
      return "none";
    case TC_BACKEND_CPU:
      return "cpu";
    case TC_BACKEND_OPENBLAS:
      return "openblas";
    case TC_BACKEND_CUDA:
      return "cuda";
    case TC_BACKEND_CUBLASLT:
      return "cublaslt";
  }
  return "unknown";
}

}  // extern "C"
