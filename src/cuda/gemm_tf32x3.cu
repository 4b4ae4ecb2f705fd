// Planner and launcher of the 3xTF32 f32 GEMM (kernel and contract: gemm_tf32x3.cuh): the
// split pre-pass into the workspace, the tensor maps, and the kernel launch (with PDL).
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "core/knobs.h"
#include "cuda/gemm_kernels.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemm_tf32x3.cuh"
#include "cuda/tile/tma_host.h"

namespace tc::cuda {
namespace {

template <int CHUNK>
cudaError_t launch_chunked(const GemmPlan& plan, cudaStream_t stream, const TmaMap& ma,
                           const TmaMap& mb, const TmaMap& mc, const WgmmaArgs& args, int64_t kp) {
  if (const cudaError_t e = raise_smem_once<gemm_tf32x3_kernel<CHUNK>>(Tf32Smem::total);
      e != cudaSuccess)
    return e;
  return launch_maybe_pdl(gemm_tf32x3_kernel<CHUNK>, dim3(plan.grid), dim3(384), Tf32Smem::total,
                          stream, 1, ma, mb, mc, args, i32(kp));
}

int64_t kpad(int64_t K) {
  return (K + 31) / 32 * 32;
}
size_t align256(size_t x) {
  return (x + 255) / 256 * 256;
}

}  // namespace

bool plan_gemm_tf32x3(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan,
                      std::string& why) {
  const tc_gemm_desc& d = p.d;
  if (d.a_dtype != TC_DTYPE_F32 || d.b_dtype != TC_DTYPE_F32 || d.c_dtype != TC_DTYPE_F32 ||
      d.accum_dtype != TC_DTYPE_F32) {
    why = "3xTF32 kernel: f32 inputs, output and accumulation only";
    return false;
  }
  if (dev.cc_major != 9 || dev.cc_minor != 0 || !tile::tma_encoder()) {
    why = "3xTF32 kernel: built for sm_90a (wgmma, TMA) only";
    return false;
  }
  if (p.batch != 1 || (d.M + 31) / 32 > 65535 || (d.N + 31) / 32 > 65535) {
    why = "3xTF32 kernel: batch 1 and M, N below 2^21 only (the SIMT kernel serves the rest)";
    return false;
  }
  const int64_t kp = kpad(d.K);
  const int64_t units = ((d.M + 127) / 128) * ((d.N + 127) / 128);
  plan->bm = plan->bn = 128;
  plan->stages = kTf32Stages;
  plan->splits = 1;
  plan->grid = int(std::min<int64_t>(units, dev.sm_count));
  plan->pack_a = plan->pack_b = true;
  plan->workspace_bytes = align256(size_t(d.M) * 2 * kp * 4) + align256(size_t(d.N) * 2 * kp * 4);
  // p.variant 1..3 = tensor-core chunks of 1, 2, 4 k-blocks (the autotuner's choices; more
  // is faster and less accurate); 0 = 1.
  const int chunk = p.variant >= 1 && p.variant <= 3 ? 1 << (p.variant - 1) : 1;
  plan->name = std::string("gemm_wgmma_tf32x3_f32_") + (d.transpose_a ? "t" : "n") +
               (d.transpose_b ? "t" : "n") + "_bm128_bn128_bk32_s3_chunk" +
               std::to_string(32 * chunk) + "_split";
  return true;
}

tc_status_t launch_gemm_tf32x3(const GemmProblem& p, const GemmPlan& plan, void* workspace) {
  const tc_gemm_desc& d = p.d;
  const int64_t kp = kpad(d.K);
  const size_t a_bytes = align256(size_t(d.M) * 2 * kp * 4);
  if (!workspace || plan.workspace_bytes < a_bytes + align256(size_t(d.N) * 2 * kp * 4))
    return TC_ERROR_INTERNAL;
  auto stream = static_cast<cudaStream_t>(p.stream);
  float* a2 = static_cast<float*>(workspace);
  float* b2 = reinterpret_cast<float*>(static_cast<char*>(workspace) + a_bytes);
  const dim3 blk(32, 8);
  // A(m, k) = transpose_a ? A[k lda + m] : A[m lda + k]; B(n, k) likewise with transpose_b.
  split_tf32_kernel<<<dim3(unsigned(kp / 32), unsigned((d.M + 31) / 32)), blk, 0, stream>>>(
      static_cast<const float*>(p.a), a2, int(d.M), int(d.K), d.transpose_a ? 1 : d.lda,
      d.transpose_a ? d.lda : 1, int(kp));
  split_tf32_kernel<<<dim3(unsigned(kp / 32), unsigned((d.N + 31) / 32)), blk, 0, stream>>>(
      static_cast<const float*>(p.b), b2, int(d.N), int(d.K), d.transpose_b ? d.ldb : 1,
      d.transpose_b ? 1 : d.ldb, int(kp));
  if (cudaGetLastError() != cudaSuccess) return TC_ERROR_BACKEND_FAILURE;

  TmaMap ma, mb, mc{};
  if (!tile::tma_encode_3d(&ma, a2, 4, uint64_t(2 * kp), uint64_t(d.M), 1, uint64_t(2 * kp * 4), 0,
                           32, 128) ||
      !tile::tma_encode_3d(&mb, b2, 4, uint64_t(2 * kp), uint64_t(d.N), 1, uint64_t(2 * kp * 4), 0,
                           32, 128))
    return TC_ERROR_BACKEND_FAILURE;
  WgmmaArgs args{};
  args.M = d.M;
  args.N = d.N;
  args.K = d.K;
  args.batch = 1;
  args.tiles_m = int((d.M + 127) / 128);
  args.tiles_n = int((d.N + 127) / 128);
  args.splits = 1;
  args.kb_total = args.kb_per_split = int(kp / 32);
  args.alpha = d.alpha;
  args.beta = d.beta;
  args.c = p.c;
  args.ldc = d.ldc;
  args.c_type = CType::f32;
  args.c_vec2 = d.ldc % 2 == 0 && reinterpret_cast<uintptr_t>(p.c) % 8 == 0;
  // The map stops at the row's last 16-byte boundary (TMA stores write whole 16-byte chunks,
  // which would reach into C's padding); the epilogue stores the tail columns directly.
  args.n_tma = wgmma_tma_cols(int(d.N), 4);
  args.tma_store = !knobs::is(knobs::kWgmmaEpilogue, "direct") && d.beta == 0.0f &&
                   args.n_tma > 0 && tile::tma_base_ok(p.c) &&
                   tile::tma_pitch_ok(uint64_t(d.ldc) * 4) &&
                   tile::tma_encode_3d(&mc, p.c, 4, uint64_t(args.n_tma), uint64_t(d.M), 1,
                                       uint64_t(d.ldc) * 4, 0, 32, 64);

  const int chunk = p.variant >= 1 && p.variant <= 3 ? 1 << (p.variant - 1) : 1;
  const cudaError_t e = chunk == 4   ? launch_chunked<4>(plan, stream, ma, mb, mc, args, kp)
                        : chunk == 2 ? launch_chunked<2>(plan, stream, ma, mb, mc, args, kp)
                                     : launch_chunked<1>(plan, stream, ma, mb, mc, args, kp);
  return e == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

}  // namespace tc::cuda
