// The CUDA kernels of the quantized matmul Y[M,N] = X[M,K] * dequant(W[N,K])^T and their
// launchers. No CUDA type appears here: the dispatch rows (src/quant/quant_cuda_rows.cpp) are
// compiled by the C++ compiler, and bench/bench_decode.cpp queues the same launchers on its
// own stream to capture a whole decode step into a CUDA graph (the public calls synchronize).
//
// Every launcher queues its work on `stream` (a cudaStream_t) and returns at once; a launch
// error comes back as TC_ERROR_BACKEND_FAILURE with the message set. Pointers are device
// pointers; W rows are GGUF rows (docs/quant.md). The exported symbols (TC_QUANT_LAUNCH) are
// tc-internal: only the in-tree benchmark and tests use them.
#pragma once

#include <tc/tc.h>

#include <cstddef>
#include <string>

#define TC_QUANT_LAUNCH __attribute__((visibility("default")))

namespace tc::cuda::quant {

struct Args {
  int M = 0, N = 0, K = 0;
  tc_dtype_t w_dtype = TC_DTYPE_Q4_0;  // Q4_0, Q8_0, Q4_K, Q6_K or I8
  // F32; F16 / BF16 for the 8-bit-activation decode kernels that read them (launch_gemv_bulk,
  // launch_mma_f16, launch_mma_bulk, launch_mma_b32: each *_supports says), which widen each
  // value exactly, so Y has the bits of the f32 launch on the widened X; or I8 with I8 weights
  // (x = x_scale * q); or Q8_0 blocks ([M][K / 32] block_q8_0; launch_gemv_bulk only, which dots
  // their codes as they are).
  tc_dtype_t x_dtype = TC_DTYPE_F32;
  const void* w = nullptr;
  const float* w_scales = nullptr;  // I8 weights: N floats
  const void* x = nullptr;          // [M,K]
  float x_scale = 1.0f;
  float* y = nullptr;  // [M,N] f32
  bool act8 = false;   // launch_decode only: 8-bit activations allowed (the q8 GEMV)
  // Launch with programmatic dependent launch where a kernel supports it (the bulk rows): the
  // kernel may start, and stream W, before the previous kernel in the stream has finished, so
  // W must not be written by that kernel (X and Y are waited for). The decode benchmark sets
  // it; the public calls where the caller passes TC_QUANT_WEIGHTS_CONSTANT (quant_rows.cpp).
  bool pdl = false;
  // Device scratch for kernels that stage X in another form (launch_mma_bulk: X quantized to
  // int8); mma_bulk_work_bytes() says how much. The kernels decline when it is missing.
  void* work = nullptr;
  size_t work_bytes = 0;
};

// v1: the simple first kernel; every format (I8 too), every M. One CTA per output row and
// group of 8 activation rows; each thread dequantizes 32 weights at a time in f32 exactly as
// the reference does. The tested fallback (TC_Q4_USE_V1=1).
TC_QUANT_LAUNCH tc_status_t launch_v1(const Args& a, void* stream);

// Decode GEMV, M <= 8, f32 activations kept f32 (exact path): Q4_0, Q8_0, Q4_K. Activations
// are staged once per CTA in shared memory, transposed by 32-element group so that the lanes
// of a warp (one weight row, one group per lane) read them without bank conflicts; weights are
// read once, dequantized in registers, scales applied once per group.
TC_QUANT_LAUNCH bool gemv_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_gemv(const Args& a, void* stream);

// Decode GEMV at M = 1, Q4_0 / Q8_0, K % 256 == 0: the same arithmetic with the weight bytes
// copied contiguously (16-byte cp.async, several chunks in flight) into shared memory first,
// so that the 2-byte-aligned blocks cost few L1 passes (gemv_quant_staged.cu).
TC_QUANT_LAUNCH bool gemv_staged_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_gemv_staged(const Args& a, void* stream);
// The same with X quantized per 32 to int8 in shared memory and dp4a dots (8-bit activations).
TC_QUANT_LAUNCH bool gemv_staged_q8_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_gemv_staged_q8(const Args& a, void* stream);

// Decode GEMV, M <= 4, 8-bit activations, Q4_0 / Q8_0 / Q4_K with K % 256 == 0: whole rows
// streamed by 1-D bulk copies (TMA) through a ring of shared-memory stages, persistent grid,
// dp4a from shared memory (gemv_quant_bulk.cu). X f32 / f16 / bf16 (quantized per 32 in the
// kernel) or Q8_0 blocks (read as they are).
TC_QUANT_LAUNCH bool gemv_bulk_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_gemv_bulk(const Args& a, void* stream);
// The cluster size launch_gemv_bulk uses for `a` (2: X quantized by halves over 2-CTA clusters,
// TC_QUANT_BULK_XCL; 1: one CTA per row range), for the tests.
TC_QUANT_LAUNCH int gemv_bulk_cluster(const Args& a);
// The weight rows of one stage launch_gemv_bulk uses for `a` (stage_cap: 64 KB stages for Q4_0's
// long batch-1 shapes, TC_QUANT_BULK_STAGE_KB), for the tests.
TC_QUANT_LAUNCH int gemv_bulk_stage_rows(const Args& a);
// The stages launch_gemv_bulk keeps in flight for `a` (0, or the ring's stages or more:
// unpaced; TC_QUANT_BULK_PACE, TC_QUANT_BULK_PACE_KB), for the tests.
TC_QUANT_LAUNCH int gemv_bulk_pace(const Args& a);

// Decode GEMV, M <= 8, f32 activations quantized per 32 to int8 inside the kernel (dp4a):
// Q4_0, Q8_0, Q4_K; rms_scaled error ~4e-3 (callers must allow 8-bit activations).
TC_QUANT_LAUNCH bool gemv_q8_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_gemv_q8(const Args& a, void* stream);

// Batched decode, M <= 32: mma.sync m16n8k16 with f16 weight fragments holding the exact small
// integers of the blocks (Q4_0 q-8, Q8_0 q, Q4_K q) and f32 scales applied per 32-group after
// each pair of MMAs. Activations are split x = hi + lo (two f16), so the products keep ~22 bits
// and the f32 bound (1e-4) holds. Each weight tile is dequantized once for the whole batch.
TC_QUANT_LAUNCH bool mma_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_mma(const Args& a, void* stream);

// Batched decode, M <= 32, 8-bit activations, Q4_0 / Q8_0 / Q4_K with K % 256 == 0: X is
// quantized to int8 into a.work (a first small kernel), then int8 tensor cores (mma.sync
// m16n8k32) on weights streamed by 1-D bulk copies, each weight byte read once for the whole
// batch (quant_mma_bulk.cu). Where M K is large, K is split over a few launches.
TC_QUANT_LAUNCH size_t mma_bulk_work_bytes(const Args& a);
TC_QUANT_LAUNCH bool mma_bulk_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_mma_bulk(const Args& a, void* stream);

// Batched decode, M <= 32, f16 activations (callers must allow 8-bit activations: the f16
// rounding of X and of the dequantized weights gives rms_scaled ~3e-4), Q4_0 / Q8_0 / Q4_K with
// K % 256 == 0: f16 tensor cores (mma.sync m16n8k16, f32 accumulators over all K) on weights
// streamed by 1-D bulk copies, each weight dequantized once, scale folded in, for the whole
// batch, X converted to f16 in the kernel (quant_mma_f16.cu). Where X of all K does not fit in
// shared memory (M K large), a first kernel writes X in f16 to a.work and K is split between
// CTAs, the last one to finish a group of passes adding the partial sums.
// mma_f16_work_bytes(a): the workspace of this call (0 where K is not split: a.work may then be
// null); mma_f16_work_bytes_upto(a): the most any M <= a.M needs (one buffer for several
// batch sizes, as the benchmarks allocate it).
TC_QUANT_LAUNCH size_t mma_f16_work_bytes(const Args& a);
TC_QUANT_LAUNCH size_t mma_f16_work_bytes_upto(const Args& a);
TC_QUANT_LAUNCH bool mma_f16_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_mma_f16(const Args& a, void* stream);
// Where the f16 MMA measured faster than the int8 MMA (H200, 2026-11-29 18:10 UTC, tc bench
// quant): Q4_0 and Q4_K at every M 3..32, Q8_0 up to M = 8 (at M = 16 / 32 the int8 kernel was
// 1.0-1.6x faster on Q8_0). The table row and launch_decode take the int8 MMA elsewhere,
// except where the batched-decode wgmma kernel serves Q8_0 at M 9..32 (quant_mma_b32.h;
// TC_QUANT_B32_Q8=0 keeps the int8 MMA there).
TC_QUANT_LAUNCH bool mma_f16_preferred(const Args& a);

// Int8 weights with an f32 scale per row, M <= 8: one warp per row, 16-byte weight loads.
TC_QUANT_LAUNCH bool i8_gemv_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_i8_gemv(const Args& a, void* stream);

// Prefill helpers: W -> dense [N,K] f16 or f32 (every format, I8 with its scales) and X ->
// dense [M,K] f16 or f32 (X f32, or I8 times x_scale).
TC_QUANT_LAUNCH tc_status_t launch_dequant_w(const Args& a, bool to_f16, void* out, void* stream);
TC_QUANT_LAUNCH tc_status_t launch_convert_x(const Args& a, bool to_f16, void* out, void* stream);

// The same two expansions to f16 written for bandwidth (quant_prefill_dequant.cu): one thread
// per 16-byte store, so a warp writes 512 contiguous bytes; W in Q4_0 / Q8_0 / Q4_K and X f32
// (other formats and I8 activations: the launchers above). Same values as the launchers above.
TC_QUANT_LAUNCH tc_status_t launch_prefill_dequant_w_f16(const Args& a, void* out, void* stream);
TC_QUANT_LAUNCH tc_status_t launch_prefill_convert_x_f16(const Args& a, void* out, void* stream);

// Fused prefill GEMM on sm_90a, Q4_0 (K % 128 == 0) / Q4_K (K % 256 == 0), W 16-byte aligned:
// Y = X dequant(W)^T with X already converted to f16 (x16, dense [M,K], 16-byte aligned) and the
// weights decoded from their blocks straight into wgmma's register A operand
// (quant_prefill_fused.cu); values as the f16 dequantization (Q4_K: one more f16 rounding).
TC_QUANT_LAUNCH bool prefill_q4_wgmma_supports(const Args& a, std::string& why);
TC_QUANT_LAUNCH tc_status_t launch_prefill_q4_wgmma(const Args& a, const void* x16, void* stream);

// The decode kernel the table's CUDA rows would pick for `a` (M <= 32): when a.act8 the f16
// MMA bulk kernel (M > 2 where mma_f16_preferred), the int8 MMA bulk kernel (M > 2, a.work
// given), the bulk GEMV, the staged or plain q8 GEMV; else the
// staged or plain f32 GEMV where they serve, else the MMA batch kernel, else v1; `name`
// (optional) gets the row's name. Half X (F16 / BF16): only the bulk GEMV and the batched-decode
// MMA kernels read it, Q8_0 X only the bulk GEMV (M <= 4); elsewhere TC_ERROR_NOT_SUPPORTED
// (the public calls convert it to f32 first).
TC_QUANT_LAUNCH tc_status_t launch_decode(const Args& a, void* stream, const char** name);

// Half-precision activations (f16, or bf16 where `bf16`) widened to f32 (n elements, any
// alignment), on `stream`.
TC_QUANT_LAUNCH tc_status_t launch_convert_half_f32(const void* x, bool bf16, float* y, size_t n,
                                                    void* stream);

// Benchmark data: `rows` rows of `k` weights of a block format with random quants and fp16
// scales in [0.01, 0.02) (the mins of Q4_K too), a hash of (seed, byte index): valid blocks
// without host traffic.
TC_QUANT_LAUNCH tc_status_t launch_fill_random_blocks(tc_dtype_t format, void* w, int64_t rows,
                                                      int64_t k, uint64_t seed, void* stream);

}  // namespace tc::cuda::quant
