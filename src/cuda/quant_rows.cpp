// The CUDA rows of the quantized matmul table: thin adapters from the validated problem to the
// launchers of quant_kernels.h, plus the prefill path (dense temporaries + tc's GEMM table).
// run() is called inside the device's run_sync, which synchronizes after it returns.
#include "cuda/quant_rows.h"

#include <cuda_runtime_api.h>

#include "core/dispatch.h"
#include "core/error.h"
#include "core/knobs.h"
#include "cuda/device.h"
#include "cuda/quant_kernels.h"
#include "cuda/quant_mma_b32.h"

namespace tc::cuda {
tc_status_t cuda_fail(cudaError_t e, const char* what);  // device.cpp
}

namespace tc::cuda::quant_rows {
namespace {

namespace kq = tc::cuda::quant;

kq::Args args(const tc::quant::MatmulProblem& p) {
  kq::Args a;
  a.M = p.d.M;
  a.N = p.d.N;
  a.K = p.d.K;
  a.w_dtype = p.d.w_dtype;
  a.x_dtype = p.d.x_dtype;
  a.w = p.w;
  a.w_scales = p.w_scales;
  a.x = p.x;
  a.x_scale = p.d.x_scale;
  a.y = p.y;
  a.act8 = p.d.quantize_activations;
  // The caller promised that no unfinished earlier work on the stream writes W: the kernels may
  // stream it before the previous kernel ends (they still wait for it before X and Y).
  a.pdl = (p.d.flags & TC_QUANT_WEIGHTS_CONSTANT) != 0;
  return a;
}

bool on_cuda(const tc::quant::MatmulProblem& p, std::string& why) {
  if (p.ctx != nullptr && p.ctx->device == TC_DEVICE_CUDA) return true;
  why = "not a CUDA context";
  return false;
}

// A device allocation released after the stream has finished with it.
struct Scratch {
  tc_context* ctx;
  void* stream;
  void* ptr = nullptr;
  ~Scratch() {
    if (ptr == nullptr) return;
    cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
    ctx->impl->release(ptr);
  }
};

// Scratch for a row's kernels in the stream's workspace (the one the GEMM rows use, reused in
// stream order): no allocation and no wait per call, so the call can be queued asynchronously
// and captured into a CUDA graph. The kernels initialize what they read of it (the f16 MMA's
// convert kernel zeroes its counters). Not for rows that run the GEMM table while holding it
// (prefill() below: the GEMM takes the same workspace).
tc_status_t stream_scratch(const tc::quant::MatmulProblem& p, size_t bytes,
                           CudaDevice::Workspace* ws) {
  return static_cast<CudaDevice&>(*p.ctx->impl).workspace(p.stream, bytes, ws);
}

// A row that keeps scratch in the stream's workspace, split in two so that run_converted_x can put
// the f32 X in the same workspace: how many bytes `p` needs, and the launch with them.
struct WorkRow {
  tc_status_t (*run)(const tc::quant::MatmulProblem& p);
  size_t (*bytes)(const tc::quant::MatmulProblem& p);
  tc_status_t (*launch)(const tc::quant::MatmulProblem& p, void* work, size_t bytes);
};
constexpr size_t kWorkAlign = 256;  // what the kernels ask of X and their scratch (16) and more

tc_status_t with_workspace(const tc::quant::MatmulProblem& p, const WorkRow& r) {
  const size_t bytes = r.bytes(p);
  CudaDevice::Workspace work;
  if (bytes > 0) TC_TRY(stream_scratch(p, bytes, &work));
  return r.launch(p, work.ptr, bytes);
}

// A bulk MMA row: its scratch sized by Bytes and passed to Launch in Args::work.
template <size_t (*Bytes)(const kq::Args&), tc_status_t (*Launch)(const kq::Args&, void*)>
constexpr WorkRow mma_work(tc_status_t (*run)(const tc::quant::MatmulProblem&)) {
  return {run, [](const tc::quant::MatmulProblem& p) { return Bytes(args(p)); },
          [](const tc::quant::MatmulProblem& p, void* work, size_t bytes) {
            kq::Args a = args(p);
            a.work = work;
            a.work_bytes = bytes;
            return Launch(a, p.stream);
          }};
}
// The f16 MMA (X in f16 and the K-split partials; nothing where K is not split) and the int8
// MMA (X quantized to int8).
const WorkRow kMmaF16Work = mma_work<kq::mma_f16_work_bytes, kq::launch_mma_f16>(mma_f16_run);
const WorkRow kMmaBulkWork = mma_work<kq::mma_bulk_work_bytes, kq::launch_mma_bulk>(mma_bulk_run);
// The fused Q4 prefill (X in f16).
const WorkRow kPrefillQ4Work = {
    prefill_q4_wgmma_run,
    [](const tc::quant::MatmulProblem& p) { return size_t(p.d.M) * size_t(p.d.K) * 2; },
    [](const tc::quant::MatmulProblem& p, void* work, size_t) {
      const kq::Args a = args(p);
      TC_TRY(kq::launch_prefill_convert_x_f16(a, work, p.stream));
      return kq::launch_prefill_q4_wgmma(a, work, p.stream);
    }};

// M > 8 (M 3..8 by shape class; Q4_0, Q4_K, Q8_0) in the f16 MMA row: the wgmma kernel
// (quant_mma_b32.cu; the K-split partials), which decodes each weight tile once into wgmma's A
// registers; the older mma.sync kernel stays where it measured faster (mma_b32_preferred) and
// behind TC_QUANT_B32=0 (mma_b32_supports declines).
const WorkRow kMmaB32Work = {
    mma_f16_run, [](const tc::quant::MatmulProblem& p) { return kq::mma_b32_work_bytes(args(p)); },
    [](const tc::quant::MatmulProblem& p, void* work, size_t bytes) {
      kq::Args a = args(p);
      a.work = work;
      a.work_bytes = bytes;
      note_instance("cuda_mma_b32_f16_wgmma");
      return kq::launch_mma_b32(a, p.stream);
    }};
bool use_b32(const tc::quant::MatmulProblem& p) {
  kq::Args a = args(p);
  if (!kq::mma_b32_preferred(a)) return false;  // M 9..32, M 3..8 by shape class
  a.work = reinterpret_cast<void*>(uintptr_t(256));
  a.work_bytes = kq::mma_b32_work_bytes(a);
  std::string ignored;
  return kq::mma_b32_supports(a, ignored);
}

// The WorkRow of the table row whose run is `run` for `p`, or nullptr for rows without scratch.
const WorkRow* work_row(tc_status_t (*run)(const tc::quant::MatmulProblem&),
                        const tc::quant::MatmulProblem& p) {
  if (run == mma_f16_run && use_b32(p)) return &kMmaB32Work;
  for (const WorkRow* r : {&kMmaF16Work, &kMmaBulkWork, &kPrefillQ4Work})
    if (r->run == run) return r;
  return nullptr;
}

tc_status_t prefill(const tc::quant::MatmulProblem& p, bool f16) {
  const kq::Args a = args(p);
  const size_t esz = f16 ? 2 : 4;
  Scratch w{p.ctx, p.stream}, x{p.ctx, p.stream};
  TC_TRY(p.ctx->impl->alloc(size_t(a.N) * a.K * esz, &w.ptr));
  TC_TRY(p.ctx->impl->alloc(size_t(a.M) * a.K * esz, &x.ptr));
  if (f16) {
    TC_TRY(kq::launch_prefill_dequant_w_f16(a, w.ptr, p.stream));
    TC_TRY(kq::launch_prefill_convert_x_f16(a, x.ptr, p.stream));
  } else {
    TC_TRY(kq::launch_dequant_w(a, false, w.ptr, p.stream));
    TC_TRY(kq::launch_convert_x(a, false, x.ptr, p.stream));
  }
  GemmProblem g;
  const tc_dtype_t t = f16 ? TC_DTYPE_F16 : TC_DTYPE_F32;
  g.d = tc_gemm_desc{a.M,   a.N,  a.K,  t,    t,   TC_DTYPE_F32, TC_DTYPE_F32,
                     false, true, 1.0f, 0.0f, a.K, a.K,          a.N};
  g.a = x.ptr;
  g.b = w.ptr;
  g.c = a.y;
  g.ctx = p.ctx;
  g.stream = p.stream;
  const knobs::Scope knob_scope;  // the GEMM rows' knobs: one look at the environment
  const GemmRow* row = pick_gemm_row(g);
  if (row == nullptr) return TC_ERROR_NOT_SUPPORTED;
  TC_TRY(row->run(g));
  // What served the GEMM stays visible in tc_last_instance().
  note_instance(intern_name(
      std::string(f16 ? "cuda_prefill_dequant_f16_gemm+" : "cuda_prefill_dequant_f32_gemm+") +
      row->name));
  return TC_SUCCESS;
}

}  // namespace

namespace {

// Decode with 8-bit activations, K % 256 == 0: the bulk GEMV up to kGemvBulkMaxM rows of X, the
// int8 MMA beyond (H200, 2026-11-29: at M = 1 the GEMV streams 2-3x faster than the MMA; at
// M = 2 the first run measured 17.4 vs 28.2 us on the hot 4096x14336 Q4_0 shape, and the MMA
// gained ~20% since; M = 8 and 32 go to the MMA, 1.7-2x faster than the GEMV rows there).
constexpr int kGemvBulkMaxM = 2;

// The MMA bulk kernel's checks with a stand-in workspace (run() allocates the real one).
bool mma_bulk_fits(const tc::quant::MatmulProblem& p, std::string& why) {
  kq::Args a = args(p);
  a.work = reinterpret_cast<void*>(uintptr_t(256));
  a.work_bytes = kq::mma_bulk_work_bytes(a);
  return kq::mma_bulk_supports(a, why);
}

}  // namespace

bool gemv_bulk_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  if (!on_cuda(p, why)) return false;
  if (!p.d.quantize_activations) return (why = "activations must stay f32", false);
  std::string ignored;
  if (p.d.M > kGemvBulkMaxM && mma_bulk_fits(p, ignored))
    return (why = "M > 2: the MMA bulk row", false);
  return kq::gemv_bulk_supports(args(p), why);
}

// The f16 MMA bulk kernel's checks with a stand-in workspace, as above.
bool mma_f16_fits(const tc::quant::MatmulProblem& p, std::string& why) {
  // The kernel takes M <= 32; declining first keeps prefill calls from sizing a workspace here.
  if (p.d.M > 32) return (why = "M > 32", false);
  kq::Args a = args(p);
  a.work = reinterpret_cast<void*>(uintptr_t(256));
  a.work_bytes = kq::mma_f16_work_bytes(a);
  return kq::mma_f16_supports(a, why);
}

// M 3..32 where 8-bit activations are allowed: the f16 MMA (X rounded to f16, weights
// dequantized once to f16 per tile), ahead of the int8 MMA, which serves where the f16 one
// measured slower (Q8_0, M > 8: mma_f16_preferred) unless the b32 wgmma kernel takes it, and
// where it declines.
bool mma_f16_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  if (!on_cuda(p, why)) return false;
  if (!p.d.quantize_activations) return (why = "activations must stay f32", false);
  if (!kq::mma_f16_preferred(args(p)) && !use_b32(p))
    return (why = "Q8_0, M > 8: the int8 MMA row", false);
  std::string ignored;
  if (p.d.M <= kGemvBulkMaxM && kq::gemv_bulk_supports(args(p), ignored))
    return (why = "M <= 2: the bulk GEMV row", false);
  return mma_f16_fits(p, why);
}
tc_status_t mma_f16_run(const tc::quant::MatmulProblem& p) {
  return with_workspace(p, use_b32(p) ? kMmaB32Work : kMmaF16Work);
}

bool mma_bulk_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  if (!on_cuda(p, why)) return false;
  if (!p.d.quantize_activations) return (why = "activations must stay f32", false);
  std::string ignored;
  if (p.d.M <= kGemvBulkMaxM && kq::gemv_bulk_supports(args(p), ignored))
    return (why = "M <= 2: the bulk GEMV row", false);
  return mma_bulk_fits(p, why);
}
tc_status_t mma_bulk_run(const tc::quant::MatmulProblem& p) {
  return with_workspace(p, kMmaBulkWork);
}
tc_status_t gemv_bulk_run(const tc::quant::MatmulProblem& p) {
  // The launcher reads about a dozen TC_QUANT_BULK_* knobs per call: one check of the
  // environment for all of them (core/knobs.h).
  const knobs::Scope knob_scope;
  return kq::launch_gemv_bulk(args(p), p.stream);
}

bool gemv_staged_q8_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  if (!on_cuda(p, why)) return false;
  if (!p.d.quantize_activations) return (why = "activations must stay f32", false);
  return kq::gemv_staged_q8_supports(args(p), why);
}
tc_status_t gemv_staged_q8_run(const tc::quant::MatmulProblem& p) {
  return kq::launch_gemv_staged_q8(args(p), p.stream);
}

bool gemv_q8_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  if (!on_cuda(p, why)) return false;
  if (!p.d.quantize_activations) return (why = "activations must stay f32", false);
  return kq::gemv_q8_supports(args(p), why);
}
tc_status_t gemv_q8_run(const tc::quant::MatmulProblem& p) {
  return kq::launch_gemv_q8(args(p), p.stream);
}

bool gemv_staged_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  return on_cuda(p, why) && kq::gemv_staged_supports(args(p), why);
}
tc_status_t gemv_staged_run(const tc::quant::MatmulProblem& p) {
  return kq::launch_gemv_staged(args(p), p.stream);
}

bool gemv_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  return on_cuda(p, why) && kq::gemv_supports(args(p), why);
}
tc_status_t gemv_run(const tc::quant::MatmulProblem& p) {
  return kq::launch_gemv(args(p), p.stream);
}

bool i8_gemv_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  return on_cuda(p, why) && kq::i8_gemv_supports(args(p), why);
}
tc_status_t i8_gemv_run(const tc::quant::MatmulProblem& p) {
  return kq::launch_i8_gemv(args(p), p.stream);
}

bool mma_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  return on_cuda(p, why) && kq::mma_supports(args(p), why);
}
tc_status_t mma_run(const tc::quant::MatmulProblem& p) {
  return kq::launch_mma(args(p), p.stream);
}

// Prefill, Q4_0 / Q4_K: X converted to f16, then the fused GEMM that decodes W inside
// (quant_prefill_fused.cu), where f16 rounding is allowed, as for the f16 dequantize row.
bool prefill_q4_wgmma_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  if (!on_cuda(p, why)) return false;
  if (!p.d.quantize_activations) return (why = "f16 rounding not allowed", false);
  if (p.d.M < 64) return (why = "M < 64", false);
  return kq::prefill_q4_wgmma_supports(args(p), why);
}
tc_status_t prefill_q4_wgmma_run(const tc::quant::MatmulProblem& p) {
  return with_workspace(p, kPrefillQ4Work);
}

bool prefill_f16_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  if (!on_cuda(p, why)) return false;
  if (!p.d.quantize_activations) return (why = "f16 rounding not allowed", false);
  if (p.d.M < 64) return (why = "M < 64", false);
  return true;
}
tc_status_t prefill_f16_run(const tc::quant::MatmulProblem& p) {
  return prefill(p, true);
}

bool prefill_f32_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  if (!on_cuda(p, why)) return false;
  if (p.d.M <= 8) return (why = "M <= 8 is served by the GEMV rows", false);
  return true;
}
tc_status_t prefill_f32_run(const tc::quant::MatmulProblem& p) {
  return prefill(p, false);
}

bool v1_can_run(const tc::quant::MatmulProblem& p, std::string& why) {
  return on_cuda(p, why);
}
tc_status_t v1_run(const tc::quant::MatmulProblem& p) {
  return kq::launch_v1(args(p), p.stream);
}

namespace {

// Whether `row` (picked for f32 X) reads p's X (half precision or Q8_0) itself: its checks,
// run on p as it is, accept it (each launcher's *_supports names the X types it reads).
bool reads_x(const tc::quant::MatmulProblem& p, const tc::quant::MatmulRow* row) {
  std::string why;
  if (row->run == gemv_bulk_run) return gemv_bulk_can_run(p, why);
  if (row->run == mma_f16_run) return mma_f16_can_run(p, why);
  if (row->run == mma_bulk_run) return mma_bulk_can_run(p, why);
  return false;
}

// p's X (f16, bf16 or Q8_0 blocks) as f32 into `out` (M K floats), on p.stream.
tc_status_t to_f32_x(const tc::quant::MatmulProblem& p, float* out) {
  if (p.d.x_dtype == TC_DTYPE_Q8_0) {  // M rows of Q8_0 blocks, dequantized as weights are
    kq::Args a;
    a.N = p.d.M;
    a.K = p.d.K;
    a.w_dtype = TC_DTYPE_Q8_0;
    a.w = p.x;
    return kq::launch_dequant_w(a, false, out, p.stream);
  }
  return kq::launch_convert_half_f32(p.x, p.d.x_dtype == TC_DTYPE_BF16, out, size_t(p.d.M) * p.d.K,
                                     p.stream);
}

}  // namespace

tc_status_t run_converted_x(const tc::quant::MatmulProblem& p, const tc::quant::MatmulRow* row) {
  if (reads_x(p, row)) return row->run(p);
  const size_t n = size_t(p.d.M) * p.d.K;
  tc::quant::MatmulProblem p32 = p;
  p32.d.x_dtype = TC_DTYPE_F32;
  // The dequantize-to-f16/f32 prefill rows run the GEMM table, which takes the stream's
  // workspace itself: their f32 X is an allocation released after a wait, as their own
  // temporaries are.
  if (row->run == prefill_f16_run || row->run == prefill_f32_run) {
    Scratch x{p.ctx, p.stream};
    TC_TRY(p.ctx->impl->alloc(n * 4, &x.ptr));
    TC_TRY(to_f32_x(p, static_cast<float*>(x.ptr)));
    p32.x = x.ptr;
    return row->run(p32);
  }
  // Every other row: the f32 X at the start of the stream's workspace and the row's own
  // scratch after it, one workspace taken once (a second take would wait on its own lock).
  const WorkRow* wr = work_row(row->run, p32);
  const size_t x_bytes = (n * 4 + kWorkAlign - 1) / kWorkAlign * kWorkAlign;
  const size_t row_bytes = wr != nullptr ? wr->bytes(p32) : 0;
  CudaDevice::Workspace ws;
  TC_TRY(stream_scratch(p, x_bytes + row_bytes, &ws));
  TC_TRY(to_f32_x(p, static_cast<float*>(ws.ptr)));
  p32.x = ws.ptr;
  if (wr == nullptr) return row->run(p32);
  return wr->launch(p32, row_bytes > 0 ? static_cast<uint8_t*>(ws.ptr) + x_bytes : nullptr,
                    row_bytes);
}

}  // namespace tc::cuda::quant_rows
