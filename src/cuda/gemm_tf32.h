// tc's own 1-pass TF32 GEMM (sm_90a): f32 inputs with accum_dtype TC_DTYPE_TF32, f32 output.
// One wgmma (kind tf32, k8) per k-step and operand pair, f32 accumulation over the whole K range,
// alpha/beta epilogue; the 3xTF32 kernel's structure with PASSES = 1 (gemm_tf32x3.cuh).
//
// Off unless TC_TF32_OWN=1 (or =pack): on the H200 (2026-11-30 02:14 UTC) it passed its tests
// but ran at 0.71-0.80x cuBLASLt's TF32 (0.78-0.95x with =pack) from 256^3 to 8192^3, and the
// autotuner chose cuBLASLt at every size with it on; docs/gemm.md.
//
// wgmma reads tf32 operands only K-major from shared memory (the PTX ISA allows imm-trans only
// for .f16 / .bf16). A K-major operand (A not transposed, B transposed) whose base and pitch
// are TMA-legal (16-byte multiples) is read by TMA straight from the caller's matrix: NT with
// aligned operands is one launch. NN with a TMA-legal B is one launch too: the kernel computes
// C^T = B^T A^T with B^T, MN-major, as the register operand (tf32_nn_in_registers). Any other
// operand (MN-major, or an odd pitch / base) is first copied K-major into the workspace
// (round_up(K, 32) x rows x 4 bytes), the raw f32 bits, so that both ways give the same bits.
//
// The decisions below are plain C++ so that tests check them without a device.
#pragma once

#include <cstdint>
#include <string>

#include "core/dispatch.h"

namespace tc::cuda {

struct GemmDevice;
struct GemmPlan;

// Whether an operand can be read by TMA in place: K-major, 16-byte base and row pitch.
inline bool tf32_direct(bool k_major, const void* base, int64_t ld) {
  return k_major && reinterpret_cast<uintptr_t>(base) % 16 == 0 && (ld * 4) % 16 == 0;
}

// Why the 1-pass TF32 row declines p on a device of compute capability cc_major.cc_minor (with
// or without the driver's TMA encoder), or "" when it serves p. `knob`: TC_TF32_OWN's value.
inline std::string tf32_decline(const GemmProblem& p, const char* knob, int cc_major, int cc_minor,
                                bool have_tma) {
  const tc_gemm_desc& d = p.d;
  if (d.a_dtype != TC_DTYPE_F32 || d.b_dtype != TC_DTYPE_F32 || d.c_dtype != TC_DTYPE_F32 ||
      d.accum_dtype != TC_DTYPE_TF32)
    return "1-pass TF32 kernel: f32 inputs and output with accum_dtype tf32 only";
  if (knob == nullptr || (std::string(knob) != "1" && std::string(knob) != "pack"))
    return "1-pass TF32 kernel: off unless TC_TF32_OWN=1 (slower than cuBLASLt's TF32)";
  if (p.batch != 1 || (d.M + 31) / 32 > 65535 || (d.N + 31) / 32 > 65535)
    return "1-pass TF32 kernel: batch 1 and M, N below 2^21 only";
  if (cc_major != 9 || cc_minor != 0 || !have_tma)
    return "1-pass TF32 kernel: built for sm_90a (wgmma, TMA) only";
  return "";
}

// Whether NN runs in one launch as C^T = B^T A^T with B^T, MN-major, as the wgmma's register
// operand (read from TMA boxes of B: its base and pitch must be 16-byte multiples); C is then
// written transposed from registers. TC_TF32_OWN=pack copies B K-major instead (the A/B).
inline bool tf32_nn_in_registers(const GemmProblem& p, const char* knob) {
  return !p.d.transpose_a && !p.d.transpose_b &&
         !(knob != nullptr && std::string(knob) == "pack") && tf32_direct(true, p.b, p.d.ldb);
}

// Plans p (false with `why` as tf32_decline says). The plan packs an operand (pack_a / pack_b,
// workspace_bytes) when tf32_direct refuses it; its name ends in _direct, _packa, _packb or
// _packab accordingly, after _areg when NN runs with B^T in registers (swap_ab).
bool plan_gemm_tf32(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan, std::string& why);
tc_status_t launch_gemm_tf32(const GemmProblem& p, const GemmPlan& plan, void* workspace);

}  // namespace tc::cuda
