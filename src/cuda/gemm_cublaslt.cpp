// The cuBLASLt dispatch rows (contract in gemm_cublaslt.h): plan cache, workspace, launch.
#include "cuda/gemm_cublaslt.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "core/error.h"
#include "cuda/device.h"
#include "cuda/gemm_cublaslt_algo.h"
#include "cuda/gemm_rows.h"
#include "cuda/i8_pack.h"

namespace tc::cuda {
namespace {

size_t round256(size_t x) {
  return (x + 255) / 256 * 256;
}

bool dtypes_are(const GemmProblem& p, tc_dtype_t in, tc_dtype_t accum, std::string& why) {
  if (p.d.a_dtype == in && p.d.b_dtype == in && p.d.accum_dtype == accum) return true;
  why = fmt::format("inputs are not {} with {} accumulation", tc_dtype_name(in),
                    tc_dtype_name(accum));
  return false;
}

bool has_plan(const GemmProblem& p, std::string& why) {
  return device_of(p).cublaslt().plan(p, why) != nullptr;
}

uint32_t align256(const void* ptr) {
  uint64_t v = reinterpret_cast<uintptr_t>(ptr) | 256;
  return uint32_t(v & (~v + 1));
}

// The plan of this thread's last call: a repeated call (a decode loop, a benchmark) finds it
// without the lock and the map. `owner` is the CublasLt's serial, never reused (an address
// could be, by a context on another device).
struct LastPlan {
  uint64_t owner = 0;
  CublasLtKey key{};
  std::shared_ptr<const CublasLtPlan> plan;
};
thread_local LastPlan t_last;

std::atomic<uint64_t> g_serial{0};

}  // namespace

CublasLtKey CublasLtKey::of(const GemmProblem& p) {
  const tc_gemm_desc& d = p.d;
  return {int32_t(d.a_dtype),
          int32_t(d.b_dtype),
          int32_t(d.c_dtype),
          int32_t(d.accum_dtype),
          d.transpose_a,
          d.transpose_b,
          d.M,
          d.N,
          d.K,
          d.lda,
          d.ldb,
          d.ldc,
          p.batch,
          d.beta != 0.0f,
          p.stride_a,
          p.stride_b,
          p.stride_c,
          align256(p.a),
          align256(p.b),
          align256(p.c)};
}

size_t CublasLtKeyHash::operator()(const CublasLtKey& k) const {
  // FNV-1a over the fields (not the bytes: padding is not hashed).
  const int64_t fields[] = {
      k.a,        k.b,        k.c,        k.acc,     k.ta,      k.tb,     k.M,
      k.N,        k.K,        k.lda,      k.ldb,     k.ldc,     k.batch,  k.beta_nonzero,
      k.stride_a, k.stride_b, k.stride_c, k.align_a, k.align_b, k.align_c};
  uint64_t h = 1469598103934665603ull;
  for (int64_t f : fields) h = (h ^ uint64_t(f)) * 1099511628211ull;
  return size_t(h);
}

tc_status_t CublasLt::create(std::unique_ptr<CublasLt>* out) {
  auto lt = std::make_unique<CublasLt>();
  cublasStatus_t st = cublasLtCreate(&lt->h_);
  if (st != CUBLAS_STATUS_SUCCESS)
    return fail(TC_ERROR_BACKEND_FAILURE, "cublasLtCreate failed: {}", cublasLtGetStatusString(st));
  lt->version_ = cublasLtGetVersion();
  lt->serial_ = ++g_serial;
  *out = std::move(lt);
  return TC_SUCCESS;
}

CublasLt::~CublasLt() {
  plans_.clear();
  if (h_) cublasLtDestroy(h_);
}

std::shared_ptr<const CublasLtPlan> CublasLt::plan(const GemmProblem& p, std::string& why) {
  return plan(CublasLtKey::of(p), p, why);
}

std::shared_ptr<const CublasLtPlan> CublasLt::plan(const CublasLtKey& key, const GemmProblem& p,
                                                   std::string& why) {
  {
    std::lock_guard lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) {
      if (!it->second) why = "cuBLASLt has no algorithm for this problem";
      return it->second;
    }
  }
  auto plan = std::make_shared<CublasLtPlan>();
  std::shared_ptr<const CublasLtPlan> result;
  if (build_cublaslt_plan(h_, p, plan.get(), why) == TC_SUCCESS) {
    // Reported as the row's name plus the heuristic result that ran.
    const char* t = p.d.accum_dtype == TC_DTYPE_TF32 ? "tf32" : tc_dtype_name(p.d.a_dtype);
    for (size_t i = 0; i < plan->algos.size(); ++i)
      plan->names.push_back(intern_name(
          fmt::format("gemm_cublaslt_{}_h{}_{}", t, i, cublaslt_algo_tag(plan->algos[i].algo))));
    result = plan;
  }
  std::lock_guard lock(mu_);
  if (plans_.size() >= 4096) plans_.clear();  // a bound for processes that see endless shapes
  plans_[key] = result;  // a failure is remembered too: the heuristic is slow to ask
  return result;
}

tc_status_t CublasLt::run(const GemmProblem& p, CudaDevice& dev) {
  const CublasLtKey key = CublasLtKey::of(p);
  if (t_last.owner != serial_ || !t_last.plan || !(t_last.key == key)) {
    std::string why;
    auto found = this->plan(key, p, why);
    if (!found) return fail(TC_ERROR_NOT_SUPPORTED, "cuBLASLt cannot run this GEMM: {}", why);
    t_last = {serial_, key, std::move(found)};
  }
  const CublasLtPlan* plan = t_last.plan.get();  // t_last keeps it alive until the next call
  const tc_gemm_desc& d = p.d;
  const int v = std::clamp(p.variant, 0, int(plan->algos.size()) - 1);
  const cublasLtMatmulHeuristicResult_t& r = plan->algos[size_t(v)];
  note_instance(plan->names[size_t(v)]);
  auto stream = static_cast<cudaStream_t>(p.stream);
  // No workspace, no lock: nothing this launch touches is shared with another call.
  CudaDevice::Workspace ws;
  if (const size_t bytes = plan->workspace_bytes(v); bytes > 0)
    TC_TRY(dev.workspace(p.stream, bytes, &ws));
  char* w = static_cast<char*>(ws.ptr);
  void* lt_ws = r.workspaceSize ? w : nullptr;
  w += round256(r.workspaceSize);
  const void* lt_a = p.b;  // column-major mapping: cuBLASLt's A is tc's B
  const void* lt_b = p.a;
  void* lt_c = p.c;
  if (plan->pack) {
    const bool b1 = p.batch > 1;
    const int ba = b1 && p.stride_a != 0 ? p.batch : 1, bb = b1 && p.stride_b != 0 ? p.batch : 1;
    auto* pa = reinterpret_cast<int8_t*>(w);
    auto* pb = reinterpret_cast<int8_t*>(w + plan->pack_a_bytes);
    // tc's A as M x K (element (m, k)), tc's B as N x K (element (n, k)).
    cudaError_t e = launch_i8_pack(static_cast<const int8_t*>(p.a), p.stride_a, d.M, d.K,
                                   d.transpose_a ? 1 : d.lda, d.transpose_a ? d.lda : 1, pa, d.M,
                                   int(plan->kp), ba, stream);
    if (e == cudaSuccess)
      e = launch_i8_pack(static_cast<const int8_t*>(p.b), p.stride_b, d.N, d.K,
                         d.transpose_b ? d.ldb : 1, d.transpose_b ? 1 : d.ldb, pb, int(plan->n4),
                         int(plan->kp), bb, stream);
    if (e != cudaSuccess) return cuda_fail(e, "packing int8 operands for cuBLASLt");
    lt_a = pb;
    lt_b = pa;
    if (plan->scratch_c) lt_c = w + plan->pack_a_bytes + plan->pack_b_bytes;
  }
  const float fa = d.alpha, fb = d.beta;
  const int32_t ia = 1, ib = plan->scratch_c ? 0 : (d.beta != 0.0f ? 1 : 0);
  const void* alpha = plan->i8 ? static_cast<const void*>(&ia) : &fa;
  const void* beta = plan->i8 ? static_cast<const void*>(&ib) : &fb;
  cublasStatus_t st =
      cublasLtMatmul(h_, plan->op, alpha, lt_a, plan->a, lt_b, plan->b, beta, lt_c, plan->c, lt_c,
                     plan->c, &r.algo, lt_ws, r.workspaceSize, stream);
  if (st != CUBLAS_STATUS_SUCCESS)
    return fail(TC_ERROR_BACKEND_FAILURE, "cublasLtMatmul failed: {}", cublasLtGetStatusString(st));
  if (plan->scratch_c) {
    cudaError_t e =
        launch_i32_add_back(static_cast<const int32_t*>(lt_c), int(plan->n4), d.M, d.N, p.batch,
                            static_cast<int32_t*>(p.c), d.ldc, p.stride_c, d.beta != 0.0f, stream);
    if (e != cudaSuccess) return cuda_fail(e, "adding the int8 GEMM's scratch into C");
  }
  return TC_SUCCESS;
}

int cublaslt_variants(const GemmProblem& p) {
  std::string why;
  auto plan = device_of(p).cublaslt().plan(p, why);
  return plan ? int(plan->algos.size()) : 0;
}

// ---- rows ----------------------------------------------------------------------------------
bool cublaslt_f32_can_run(const GemmProblem& p, std::string& why) {
  return dtypes_are(p, TC_DTYPE_F32, TC_DTYPE_F32, why) && has_plan(p, why);
}
bool cublaslt_tf32_can_run(const GemmProblem& p, std::string& why) {
  return dtypes_are(p, TC_DTYPE_F32, TC_DTYPE_TF32, why) && has_plan(p, why);
}
bool cublaslt_f16_can_run(const GemmProblem& p, std::string& why) {
  return dtypes_are(p, TC_DTYPE_F16, TC_DTYPE_F32, why) && has_plan(p, why);
}
bool cublaslt_bf16_can_run(const GemmProblem& p, std::string& why) {
  return dtypes_are(p, TC_DTYPE_BF16, TC_DTYPE_F32, why) && has_plan(p, why);
}
bool cublaslt_i8_can_run(const GemmProblem& p, std::string& why) {
  return dtypes_are(p, TC_DTYPE_I8, TC_DTYPE_I32, why) && has_plan(p, why);
}

tc_status_t cublaslt_run(const GemmProblem& p) {
  CudaDevice& dev = device_of(p);
  return dev.cublaslt().run(p, dev);
}

}  // namespace tc::cuda
