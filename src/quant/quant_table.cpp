// The quantized matmul dispatch table: the fallback ladder, fastest first. A call runs the
// first row of its context's device whose can_run accepts it; TC_Q4_USE_V1=1 forces that
// device's v1 row (its last row). The CUDA rows (src/cuda/quant_rows.h) go above the CPU rows
// when src/cuda/quant.cmake is built (TC_CUDA_HAVE_QUANT). The decision is remembered per
// thread (pick_matmul_row).
#include "core/dispatch_memo.h"
#include "core/env.h"
#include "core/error.h"
#include "cpu/cpu_features.h"
#include "quant/blocks.h"
#include "quant/matmul.h"
#ifdef TC_CUDA_HAVE_QUANT
#include "cuda/quant_rows.h"
#endif

namespace tc::quant {
namespace {

bool is_block(tc_dtype_t t) {
  return format_info(t) != nullptr;
}

bool need_avx2(std::string& why) {
  if (cpu_has_avx2()) return true;
  why = "the CPU lacks AVX2/FMA/F16C";
  return false;
}

bool gemv_f32_act(const MatmulProblem& p, tc_dtype_t w, bool quantized, std::string& why) {
  if (p.d.w_dtype != w || p.d.x_dtype != TC_DTYPE_F32) return (why = "other dtypes", false);
  if (p.d.M > 8) return (why = "M > 8", false);
  if (p.d.quantize_activations != quantized) {
    why = quantized ? "activations must stay f32" : "8-bit activations allowed (faster row)";
    return false;
  }
  return need_avx2(why);
}

const MatmulRow kRows[] = {
#ifdef TC_CUDA_HAVE_QUANT
    TC_QUANT_CUDA_ROWS
#endif
    {TC_BACKEND_CPU, "gemv_q4_0_q8_0_avx2",
     [](const MatmulProblem& p, std::string& why) {
       return gemv_f32_act(p, TC_DTYPE_Q4_0, true, why);
     },
     cpu::gemv_q4_0_q8_0_avx2},
    {TC_BACKEND_CPU, "gemv_q8_0_q8_0_avx2",
     [](const MatmulProblem& p, std::string& why) {
       return gemv_f32_act(p, TC_DTYPE_Q8_0, true, why);
     },
     cpu::gemv_q8_0_q8_0_avx2},
    {TC_BACKEND_CPU, "gemv_q4_k_q8_0_avx2",
     [](const MatmulProblem& p, std::string& why) {
       return gemv_f32_act(p, TC_DTYPE_Q4_K, true, why);
     },
     cpu::gemv_q4_k_q8_0_avx2},
    {TC_BACKEND_CPU, "gemv_block_f32_l1tile_avx2",
     [](const MatmulProblem& p, std::string& why) {
       if (!is_block(p.d.w_dtype) || p.d.x_dtype != TC_DTYPE_F32) return (why = "dtypes", false);
       if (p.d.M > 8) return (why = "M > 8", false);
       return need_avx2(why);
     },
     cpu::gemv_block_f32_avx2},
    {TC_BACKEND_CPU, "gemv_i8_f32_avx2",
     [](const MatmulProblem& p, std::string& why) {
       if (p.d.w_dtype != TC_DTYPE_I8 || p.d.x_dtype != TC_DTYPE_F32)
         return (why = "dtypes", false);
       if (p.d.M > 8) return (why = "M > 8", false);
       return need_avx2(why);
     },
     cpu::gemv_i8_f32_avx2},
    {TC_BACKEND_CPU, "gemv_i8_i8_avx2",
     [](const MatmulProblem& p, std::string& why) {
       if (p.d.w_dtype != TC_DTYPE_I8 || p.d.x_dtype != TC_DTYPE_I8) return (why = "dtypes", false);
       if (p.d.M > 8) return (why = "M > 8", false);
       return need_avx2(why);
     },
     cpu::gemv_i8_i8_avx2},
    {TC_BACKEND_OPENBLAS, "gemm_dequant_panel_sgemm",
     [](const MatmulProblem& p, std::string& why) {
       if (p.d.M <= 8) return (why = "M <= 8 is served by the GEMV rows", false);
       return true;
     },
     cpu::gemm_dequant_panel_sgemm},
    {TC_BACKEND_CPU, "gemv_quant_v1_scalar",
     [](const MatmulProblem&, std::string&) { return true; }, cpu::gemv_quant_v1},
};

// What a decision depends on (see pick_matmul_row).
struct QuantKey {
  const void* impl;
  int32_t device, M, N, K, w, x, y;
  bool act8, scales;
  uint32_t align_w, align_s, align_x, align_y;
  uint64_t env;
  bool operator==(const QuantKey&) const = default;
};

QuantKey key_of(const MatmulProblem& p, uint64_t env) {
  const tc_quant_matmul_desc& d = p.d;
  return {p.ctx != nullptr ? p.ctx->impl.get() : nullptr,
          p.ctx != nullptr ? int32_t(p.ctx->device) : -1,
          d.M,
          d.N,
          d.K,
          int32_t(d.w_dtype),
          int32_t(d.x_dtype),
          int32_t(d.y_dtype),
          d.quantize_activations,
          p.w_scales != nullptr,
          memo::align256(p.w),
          memo::align256(p.w_scales),
          memo::align256(p.x),
          memo::align256(p.y),
          env};
}

uint64_t hash_of(const QuantKey& k) {
  const uint64_t f[] = {reinterpret_cast<uintptr_t>(k.impl),
                        uint64_t(uint32_t(k.device)) << 32 | uint32_t(k.M),
                        uint64_t(uint32_t(k.N)) << 32 | uint32_t(k.K),
                        uint64_t(uint32_t(k.w)) | uint64_t(uint32_t(k.x)) << 16 |
                            uint64_t(uint32_t(k.y)) << 32 | uint64_t(k.act8) << 48 |
                            uint64_t(k.scales) << 49,
                        uint64_t(k.align_w) << 32 | k.align_x,
                        uint64_t(k.align_s) << 32 | k.align_y,
                        k.env};
  return memo::mix(f);
}

// Direct-mapped, per thread (no lock); an empty slot has no row.
struct QuantSlot {
  QuantKey key;
  const MatmulRow* row;
};
constexpr size_t kQuantSlots = 16;
thread_local QuantSlot t_quant_slots[kQuantSlots];

}  // namespace

bool cpu_has_avx2() {
  return cpu::has(TC_CPU_AVX2 | TC_CPU_FMA | TC_CPU_F16C);
}

std::span<const MatmulRow> matmul_table() {
  return kRows;
}

namespace {

// The row for p without the memo.
const MatmulRow* decide(const MatmulProblem& p, bool debug) {
  const auto rows = matmul_table();
  const tc_device_t dev = p.ctx != nullptr ? p.ctx->device : TC_DEVICE_CPU;
  auto on_device = [dev](const MatmulRow& r) {
    const bool cuda = r.backend == TC_BACKEND_CUDA || r.backend == TC_BACKEND_CUBLASLT;
    return cuda == (dev == TC_DEVICE_CUDA);
  };
  if (env::flag("TC_Q4_USE_V1")) {
    for (size_t i = rows.size(); i-- > 0;) {
      if (on_device(rows[i])) return &rows[i];
    }
  }
  std::string why, all;
  for (const MatmulRow& r : rows) {
    if (!on_device(r)) continue;
    why.clear();
    if (r.can_run(p, why)) {
      if (debug)
        log_debug(fmt::format("quant matmul M={} N={} K={}: {}", p.d.M, p.d.N, p.d.K, r.name));
      return &r;
    }
    all += fmt::format("{}: {}; ", r.name, why);
  }
  fail(TC_ERROR_NOT_SUPPORTED, "no quantized matmul row can serve this call ({})", all);
  return nullptr;
}

}  // namespace

// A decode step is ~130 calls of 4-20 us of GPU time each, queued from the host: what the call
// does before its launch is part of the step. The decision is remembered per thread, keyed by
// everything the rows' can_run read (as the GEMM dispatch does, core/dispatch_memo.h): the
// device, the descriptor's dtypes and shape, the pointers' alignment, and the fingerprint of
// the TC_* environment (TC_Q4_USE_V1, TC_CPU_ISA and the launchers' knobs), so a repeated call
// reads no knob and runs no can_run, while a test that sets a knob gets a fresh decision.
const MatmulRow* pick_matmul_row(const MatmulProblem& p) {
  const memo::Knobs knobs = memo::read_knobs();
  if (knobs.debug) return decide(p, true);  // TC_LOG=debug logs every decision
  const QuantKey key = key_of(p, knobs.fingerprint);
  QuantSlot& slot = t_quant_slots[hash_of(key) % kQuantSlots];
  if (slot.row != nullptr && slot.key == key) return slot.row;
  const MatmulRow* row = decide(p, false);
  if (row != nullptr) slot = {key, row};
  return row;
}

}  // namespace tc::quant
