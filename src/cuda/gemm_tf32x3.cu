// Planners and launchers of the TF32 tensor-core f32 GEMMs (kernel and contract:
// gemm_tf32x3.cuh): 3xTF32 at f32 accuracy (accum_dtype F32) and the 1-pass TF32 kernel
// (accum_dtype TF32, gemm_tf32.h). Both copy operands K-major into the workspace where they
// must (3xTF32: always, as hi and lo parts), encode the tensor maps and launch (with PDL).
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "core/knobs.h"
#include "cuda/gemm_kernels.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemm_tf32.h"
#include "cuda/gemm_tf32x3.cuh"
#include "cuda/tile/tma_host.h"

namespace tc::cuda {
namespace {

template <int PASSES, int CHUNK, bool AREG = false>
cudaError_t launch_kernel(const GemmPlan& plan, cudaStream_t stream, const TmaMap& ma,
                          const TmaMap& mb, const TmaMap& mc, const WgmmaArgs& args, int64_t kp) {
  constexpr int smem = Tf32Smem<PASSES>::total;
  if (const cudaError_t e = raise_smem_once<gemm_tf32x3_kernel<PASSES, CHUNK, AREG>>(smem);
      e != cudaSuccess)
    return e;
  return launch_maybe_pdl(gemm_tf32x3_kernel<PASSES, CHUNK, AREG>, dim3(plan.grid), dim3(384), smem,
                          stream, 1, ma, mb, mc, args, i32(kp));
}

int64_t kpad(int64_t K) {
  return (K + 31) / 32 * 32;
}
size_t align256(size_t x) {
  return (x + 255) / 256 * 256;
}
// Workspace bytes of one operand's K-major copy: rows of `parts` x kp floats.
size_t copy_bytes(int64_t rows, int parts, int64_t kp) {
  return align256(size_t(rows) * parts * kp * 4);
}

// The map of one operand as `rows` x K, K-major: the caller's matrix itself (pack false: it is
// K-major and TMA-legal), or its copy into *ws (split_tf32_kernel<PASSES>), *ws then advancing.
// Element (r, k) of the source is src[r ld + k] when k_major, else src[k ld + r].
template <int PASSES>
bool operand_map(TmaMap* map, const void* src, int64_t rows, int64_t K, bool k_major, int64_t ld,
                 bool pack, int64_t kp, char** ws, cudaStream_t stream) {
  if (!pack)
    return tile::tma_encode_3d(map, src, 4, uint64_t(K), uint64_t(rows), 1, uint64_t(ld) * 4, 0, 32,
                               128);
  constexpr int parts = Tf32Smem<PASSES>::parts;
  float* dst = reinterpret_cast<float*>(*ws);
  *ws += copy_bytes(rows, parts, kp);
  split_tf32_kernel<PASSES>
      <<<dim3(unsigned(kp / 32), unsigned((rows + 31) / 32)), dim3(32, 8), 0, stream>>>(
          static_cast<const float*>(src), dst, int(rows), int(K), k_major ? ld : 1,
          k_major ? 1 : ld, int(kp));
  if (cudaGetLastError() != cudaSuccess) return false;
  return tile::tma_encode_3d(map, dst, 4, uint64_t(parts * kp), uint64_t(rows), 1,
                             uint64_t(parts * kp * 4), 0, 32, 128);
}

// The epilogue's and the tile loop's arguments, and C's map when TMA stores serve it. swap:
// the kernel computes C^T = B^T A^T (its rows are C's columns) and writes it transposed.
WgmmaArgs make_args(const GemmProblem& p, int64_t kp, TmaMap* mc, bool swap = false) {
  const tc_gemm_desc& d = p.d;
  WgmmaArgs args{};
  args.M = swap ? d.N : d.M;
  args.N = swap ? d.M : d.N;
  args.K = d.K;
  args.batch = 1;
  args.tiles_m = int((args.M + 127) / 128);
  args.tiles_n = int((args.N + 127) / 128);
  args.splits = 1;
  args.kb_total = args.kb_per_split = int(kp / 32);
  args.alpha = d.alpha;
  args.beta = d.beta;
  args.c = p.c;
  args.ldc = d.ldc;
  args.c_type = CType::f32;
  args.c_trans = swap;
  args.c_vec2 = !swap && d.ldc % 2 == 0 && reinterpret_cast<uintptr_t>(p.c) % 8 == 0;
  // The map stops at the row's last 16-byte boundary (TMA stores write whole 16-byte chunks,
  // which would reach into C's padding); the epilogue stores the tail columns directly.
  args.n_tma = wgmma_tma_cols(int(d.N), 4);
  args.tma_store = !swap && !knobs::is(knobs::kWgmmaEpilogue, "direct") && d.beta == 0.0f &&
                   args.n_tma > 0 && tile::tma_base_ok(p.c) &&
                   tile::tma_pitch_ok(uint64_t(d.ldc) * 4) &&
                   tile::tma_encode_3d(mc, p.c, 4, uint64_t(args.n_tma), uint64_t(d.M), 1,
                                       uint64_t(d.ldc) * 4, 0, 32, 64);
  return args;
}

void plan_tiles(const tc_gemm_desc& d, const GemmDevice& dev, int stages, GemmPlan* plan) {
  const int64_t units = ((d.M + 127) / 128) * ((d.N + 127) / 128);
  plan->bm = plan->bn = 128;
  plan->stages = stages;
  plan->splits = 1;
  plan->grid = int(std::min<int64_t>(units, dev.sm_count));
}

std::string transposes(const tc_gemm_desc& d) {
  return std::string(d.transpose_a ? "t" : "n") + (d.transpose_b ? "t" : "n");
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
  plan_tiles(d, dev, Tf32Smem<3>::stages, plan);
  plan->pack_a = plan->pack_b = true;
  plan->workspace_bytes = copy_bytes(d.M, 2, kp) + copy_bytes(d.N, 2, kp);
  // p.variant 1..3 = tensor-core chunks of 1, 2, 4 k-blocks (the autotuner's choices; more
  // is faster and less accurate); 0 = 1.
  const int chunk = p.variant >= 1 && p.variant <= 3 ? 1 << (p.variant - 1) : 1;
  plan->name = "gemm_wgmma_tf32x3_f32_" + transposes(d) + "_bm128_bn128_bk32_s3_chunk" +
               std::to_string(32 * chunk) + "_split";
  return true;
}

tc_status_t launch_gemm_tf32x3(const GemmProblem& p, const GemmPlan& plan, void* workspace) {
  const tc_gemm_desc& d = p.d;
  const int64_t kp = kpad(d.K);
  if (!workspace || plan.workspace_bytes < copy_bytes(d.M, 2, kp) + copy_bytes(d.N, 2, kp))
    return TC_ERROR_INTERNAL;
  auto stream = static_cast<cudaStream_t>(p.stream);
  char* ws = static_cast<char*>(workspace);
  TmaMap ma, mb, mc{};
  if (!operand_map<3>(&ma, p.a, d.M, d.K, !d.transpose_a, d.lda, true, kp, &ws, stream) ||
      !operand_map<3>(&mb, p.b, d.N, d.K, d.transpose_b, d.ldb, true, kp, &ws, stream))
    return TC_ERROR_BACKEND_FAILURE;
  const WgmmaArgs args = make_args(p, kp, &mc);
  const int chunk = p.variant >= 1 && p.variant <= 3 ? 1 << (p.variant - 1) : 1;
  const cudaError_t e = chunk == 4   ? launch_kernel<3, 4>(plan, stream, ma, mb, mc, args, kp)
                        : chunk == 2 ? launch_kernel<3, 2>(plan, stream, ma, mb, mc, args, kp)
                                     : launch_kernel<3, 1>(plan, stream, ma, mb, mc, args, kp);
  return e == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

bool plan_gemm_tf32(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan, std::string& why) {
  why = tf32_decline(p, knobs::get(knobs::kTf32Own), dev.cc_major, dev.cc_minor,
                     tile::tma_encoder() != nullptr);
  if (!why.empty()) return false;
  const tc_gemm_desc& d = p.d;
  const int64_t kp = kpad(d.K);
  plan_tiles(d, dev, Tf32Smem<1>::stages, plan);
  plan->swap_ab = tf32_nn_in_registers(p, knobs::get(knobs::kTf32Own));
  plan->pack_a = !tf32_direct(!d.transpose_a, p.a, d.lda);
  plan->pack_b = !plan->swap_ab && !tf32_direct(d.transpose_b, p.b, d.ldb);
  plan->workspace_bytes =
      (plan->pack_a ? copy_bytes(d.M, 1, kp) : 0) + (plan->pack_b ? copy_bytes(d.N, 1, kp) : 0);
  plan->name = "gemm_wgmma_tf32_f32_" + transposes(d) + "_bm128_bn128_bk32_s" +
               std::to_string(Tf32Smem<1>::stages) + (plan->swap_ab ? "_areg" : "") +
               (plan->pack_a ? (plan->pack_b ? "_packab" : "_packa")
                             : (plan->pack_b ? "_packb" : "_direct"));
  return true;
}

tc_status_t launch_gemm_tf32(const GemmProblem& p, const GemmPlan& plan, void* workspace) {
  const tc_gemm_desc& d = p.d;
  const int64_t kp = kpad(d.K);
  if (plan.workspace_bytes > 0 && !workspace) return TC_ERROR_INTERNAL;
  auto stream = static_cast<cudaStream_t>(p.stream);
  char* ws = static_cast<char*>(workspace);
  TmaMap ma, mb, mc{};
  if (plan.swap_ab) {  // NN as C^T = B^T A^T: B (K x N, N-major) in boxes of 32 k x 32 n
    if (!tile::tma_encode_3d(&ma, p.b, 4, uint64_t(d.N), uint64_t(d.K), 1, uint64_t(d.ldb) * 4, 0,
                             32, 32) ||
        !operand_map<1>(&mb, p.a, d.M, d.K, true, d.lda, plan.pack_a, kp, &ws, stream))
      return TC_ERROR_BACKEND_FAILURE;
    const WgmmaArgs args = make_args(p, kp, &mc, true);
    const cudaError_t e = launch_kernel<1, 1, true>(plan, stream, ma, mb, mc, args, kp);
    return e == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
  }
  if (!operand_map<1>(&ma, p.a, d.M, d.K, !d.transpose_a, d.lda, plan.pack_a, kp, &ws, stream) ||
      !operand_map<1>(&mb, p.b, d.N, d.K, d.transpose_b, d.ldb, plan.pack_b, kp, &ws, stream))
    return TC_ERROR_BACKEND_FAILURE;
  const WgmmaArgs args = make_args(p, kp, &mc);
  const cudaError_t e = launch_kernel<1, 1>(plan, stream, ma, mb, mc, args, kp);
  return e == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

}  // namespace tc::cuda
