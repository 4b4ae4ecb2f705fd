// Dispatch rows over tc's own kernel families (launchers in gemm_kernels.h): can_run asks the
// family's planner, run plans again (plans are cheap and depend on the pointers), takes the
// stream's workspace when the plan needs one, launches, and reports the planned instance name.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "core/error.h"
#include "cuda/device.h"
#include "cuda/gemm_kernels.h"
#include "cuda/gemm_rows.h"

namespace tc::cuda {
namespace {

// intern_name() takes a lock and hashes the name; a thread launching the same instance again
// (the common case) reuses its last answer after one string comparison.
const char* interned(const std::string& name) {
  thread_local std::string last;
  thread_local const char* last_interned = nullptr;
  if (last_interned == nullptr || name != last) {
    last_interned = intern_name(name);
    last = name;
  }
  return last_interned;
}

// Launchers return a status without a message; name the instance and the CUDA error.
tc_status_t launched(tc_status_t st, const GemmPlan& plan) {
  note_instance(interned(plan.name));
  if (st == TC_SUCCESS) return st;
  cudaError_t e = cudaGetLastError();
  return fail(st == TC_ERROR_INTERNAL ? TC_ERROR_INTERNAL : TC_ERROR_BACKEND_FAILURE,
              "launching {} failed: {}", plan.name,
              e != cudaSuccess ? cudaGetErrorString(e) : tc_status_string(st));
}

[[maybe_unused]] tc_status_t not_planned(const std::string& why) {
  return fail(TC_ERROR_NOT_SUPPORTED, "the kernel cannot serve this GEMM: {}", why);
}

// The autotuner's fixed variants (split-K 8 on 8192^2 wants 2 GiB of partial sums) may use
// at most 32 MiB or the bytes of the operands, whichever is more; the planner's own choice
// (variant 0) is never refused, and it only splits K when M x N is small.
[[maybe_unused]] bool workspace_allowed(const GemmProblem& p, const GemmPlan& plan) {
  if (p.variant == 0) return true;
  const tc_gemm_desc& d = p.d;
  const size_t operands = size_t(p.batch) * (size_t(d.M) * d.K * tc_dtype_size(d.a_dtype) +
                                             size_t(d.K) * d.N * tc_dtype_size(d.b_dtype) +
                                             size_t(d.M) * d.N * tc_dtype_size(d.c_dtype));
  return plan.workspace_bytes <= std::max(size_t(32) << 20, operands);
}

}  // namespace

#ifdef TC_CUDA_HAVE_GEMM_WGMMA
bool wgmma_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_wgmma(p, device_of(p).gemm_device(), &plan, why);
}

tc_status_t wgmma_run(const GemmProblem& p) {
  CudaDevice& dev = device_of(p);
  GemmPlan plan;
  std::string why;
  if (!plan_gemm_wgmma(p, dev.gemm_device(), &plan, why)) return not_planned(why);
  if (!workspace_allowed(p, plan))
    return fail(TC_ERROR_NOT_SUPPORTED, "{} needs {} bytes of workspace, over the variants' limit",
                plan.name, plan.workspace_bytes);
  CudaDevice::Workspace ws;
  TC_TRY(dev.workspace(p.stream, plan.workspace_bytes, &ws));
  return launched(launch_gemm_wgmma(p, plan, ws.ptr), plan);
}
#endif

#ifdef TC_CUDA_HAVE_GEMM_MMA
bool mma_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_mma(p, device_of(p).gemm_device(), &plan, why);
}

tc_status_t mma_run(const GemmProblem& p) {
  GemmPlan plan;
  std::string why;
  if (!plan_gemm_mma(p, device_of(p).gemm_device(), &plan, why)) return not_planned(why);
  return launched(launch_gemm_mma(p, plan), plan);
}
#endif

#ifdef TC_CUDA_HAVE_GEMM_SKINNY
bool skinny_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_skinny(p, device_of(p).gemm_device(), &plan, why);
}

tc_status_t skinny_run(const GemmProblem& p) {
  GemmPlan plan;
  std::string why;
  if (!plan_gemm_skinny(p, device_of(p).gemm_device(), &plan, why)) return not_planned(why);
  return launched(launch_gemm_skinny(p, plan), plan);
}
#endif

#ifdef TC_CUDA_HAVE_GEMM_TF32X3
bool tf32x3_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_tf32x3(p, device_of(p).gemm_device(), &plan, why);
}

// The split operands take (M + N) x 2 x K x 4 bytes of workspace (268 MB at 4096^3).
tc_status_t tf32x3_run(const GemmProblem& p) {
  CudaDevice& dev = device_of(p);
  GemmPlan plan;
  std::string why;
  if (!plan_gemm_tf32x3(p, dev.gemm_device(), &plan, why)) return not_planned(why);
  if (!workspace_allowed(p, plan))
    return fail(TC_ERROR_NOT_SUPPORTED, "{} needs {} bytes of workspace, over the variants' limit",
                plan.name, plan.workspace_bytes);
  CudaDevice::Workspace ws;
  TC_TRY(dev.workspace(p.stream, plan.workspace_bytes, &ws));
  return launched(launch_gemm_tf32x3(p, plan, ws.ptr), plan);
}
#endif

#ifdef TC_CUDA_HAVE_GEMM_F32
bool f32_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_f32(p, device_of(p).gemm_device(), &plan, why);
}

tc_status_t f32_run(const GemmProblem& p) {
  GemmPlan plan;
  std::string why;
  if (!plan_gemm_f32(p, device_of(p).gemm_device(), &plan, why)) return not_planned(why);
  return launched(launch_gemm_f32(p, plan), plan);
}
#endif

}  // namespace tc::cuda
