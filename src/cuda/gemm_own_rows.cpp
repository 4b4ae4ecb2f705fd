// Dispatch rows over tc's own kernel families (launchers in gemm_kernels.h): can_run asks the
// family's planner; run takes the plan of the call's signature from this thread's plan cache
// (planning again only when the signature is new), takes the stream's workspace when the plan
// needs one, launches, and reports the planned instance name.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>

#include "core/dispatch_memo.h"
#include "core/error.h"
#include "core/knobs.h"
#include "cuda/device.h"
#include "cuda/gemm_kernels.h"
#include "cuda/gemm_rows.h"
#include "cuda/gemm_tf32.h"

namespace tc::cuda {
namespace {

// Launchers return a status without a message; name the instance and the CUDA error.
tc_status_t launched(tc_status_t st, const GemmPlan& plan, const char* name) {
  note_instance(name);
  if (st == TC_SUCCESS) return st;
  cudaError_t e = cudaGetLastError();
  return fail(st == TC_ERROR_INTERNAL ? TC_ERROR_INTERNAL : TC_ERROR_BACKEND_FAILURE,
              "launching {} failed: {}", plan.name,
              e != cudaSuccess ? cudaGetErrorString(e) : tc_status_string(st));
}

[[maybe_unused]] tc_status_t not_planned(const std::string& why) {
  return fail(TC_ERROR_NOT_SUPPORTED, "the kernel cannot serve this GEMM: {}", why);
}

// A plan is a function of what the dispatch memo's key holds (core/dispatch_memo.h: the
// context, every descriptor field, batch and strides, the pointers' alignment up to 256 bytes)
// plus the variant and the planner's knobs: under that key, with the knobs' stamp and the
// variant in place of the memo's environment and generation, a repeated call (a decode loop, a
// benchmark's rotating buffers) reuses its plan, its instance name already interned, instead of
// planning again (strings, tile estimates) on every call. Per thread and per planner,
// direct-mapped; a new signature replaces its slot's plan.
struct CachedPlan {
  memo::CallKey key{};
  GemmPlan plan;
  const char* name = nullptr;  // plan.name, interned (note_instance)
  bool used = false;
};
using Planner = bool (*)(const GemmProblem&, const GemmDevice&, GemmPlan*, std::string&);

template <Planner Plan>
const CachedPlan* cached_plan(const GemmProblem& p, const GemmDevice& dev, std::string& why) {
  // Allocated on first use and never freed: a thread_local array of plans (their names are
  // strings) would be destroyed at thread exit before objects constructed earlier on that
  // thread, whose destructors may still call tc_gemm (review, 2026-11-30).
  thread_local std::array<CachedPlan, 16>* cache_ptr = nullptr;
  if (cache_ptr == nullptr) cache_ptr = new std::array<CachedPlan, 16>();
  std::array<CachedPlan, 16>& cache = *cache_ptr;
  const memo::CallKey key = memo::key_of(p, knobs::stamp(), uint64_t(uint32_t(p.variant)));
  CachedPlan& slot = cache[memo::hash_of(key) % cache.size()];
  if (slot.used && slot.key == key) return &slot;
  GemmPlan plan;
  if (!Plan(p, dev, &plan, why)) return nullptr;
  slot.plan = std::move(plan);
  slot.name = intern_name(slot.plan.name);
  slot.key = key;
  slot.used = true;
  return &slot;
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

// Plans (from the cache), checks the variants' workspace limit, takes the stream's workspace
// when the plan needs one (none: no lock, no map lookup) and launches.
template <Planner Plan, class Launch>
tc_status_t run_planned(const GemmProblem& p, Launch&& launch) {
  CudaDevice& dev = device_of(p);
  std::string why;
  const CachedPlan* c = cached_plan<Plan>(p, dev.gemm_device(), why);
  if (c == nullptr) return not_planned(why);
  const GemmPlan& plan = c->plan;
  if (!workspace_allowed(p, plan))
    return fail(TC_ERROR_NOT_SUPPORTED, "{} needs {} bytes of workspace, over the variants' limit",
                plan.name, plan.workspace_bytes);
  CudaDevice::Workspace ws;
  if (plan.workspace_bytes > 0) TC_TRY(dev.workspace(p.stream, plan.workspace_bytes, &ws));
  return launched(launch(plan, ws.ptr), plan, c->name);
}

}  // namespace

#ifdef TC_CUDA_HAVE_GEMM_WGMMA
bool wgmma_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_wgmma(p, device_of(p).gemm_device(), &plan, why);
}

tc_status_t wgmma_run(const GemmProblem& p) {
  return run_planned<plan_gemm_wgmma>(
      p, [&](const GemmPlan& plan, void* ws) { return launch_gemm_wgmma(p, plan, ws); });
}
#endif

#ifdef TC_CUDA_HAVE_GEMM_MMA
bool mma_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_mma(p, device_of(p).gemm_device(), &plan, why);
}

tc_status_t mma_run(const GemmProblem& p) {
  return run_planned<plan_gemm_mma>(
      p, [&](const GemmPlan& plan, void*) { return launch_gemm_mma(p, plan); });
}
#endif

#ifdef TC_CUDA_HAVE_GEMM_SKINNY
bool skinny_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_skinny(p, device_of(p).gemm_device(), &plan, why);
}

tc_status_t skinny_run(const GemmProblem& p) {
  return run_planned<plan_gemm_skinny>(
      p, [&](const GemmPlan& plan, void*) { return launch_gemm_skinny(p, plan); });
}
#endif

#ifdef TC_CUDA_HAVE_GEMM_TF32X3
bool tf32x3_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_tf32x3(p, device_of(p).gemm_device(), &plan, why);
}

// The split operands take (M + N) x 2 x K x 4 bytes of workspace (268 MB at 4096^3).
tc_status_t tf32x3_run(const GemmProblem& p) {
  return run_planned<plan_gemm_tf32x3>(
      p, [&](const GemmPlan& plan, void* ws) { return launch_gemm_tf32x3(p, plan, ws); });
}

// The 1-pass TF32 kernel (gemm_tf32.h): declines unless TC_TF32_OWN=1 (slower than cuBLASLt);
// workspace only for an operand that is not K-major and TMA-legal (round_up(K, 32) x rows x 4).
bool tf32_own_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_tf32(p, device_of(p).gemm_device(), &plan, why);
}

tc_status_t tf32_own_run(const GemmProblem& p) {
  return run_planned<plan_gemm_tf32>(
      p, [&](const GemmPlan& plan, void* ws) { return launch_gemm_tf32(p, plan, ws); });
}
#endif

#ifdef TC_CUDA_HAVE_GEMM_F32
bool f32_can_run(const GemmProblem& p, std::string& why) {
  GemmPlan plan;
  return plan_gemm_f32(p, device_of(p).gemm_device(), &plan, why);
}

tc_status_t f32_run(const GemmProblem& p) {
  return run_planned<plan_gemm_f32>(
      p, [&](const GemmPlan& plan, void*) { return launch_gemm_f32(p, plan); });
}
#endif

}  // namespace tc::cuda
