// Decode GEMM, M <= 32: C[M,N] = alpha * A[M,K] B[N,K]^T + beta * C (B = weights, transpose_b).
// Memory-bound: B is streamed once at (near) copy bandwidth; A (<= 32 rows) stays in L1/L2.
// This file plans and launches two kernels: the register kernel below (the default), and, on
// request (TC_SKINNY_BULK=1), the shared-memory ring kernel of gemm_skinny_bulk.cu, which was
// slower on every decode cell (0.38-0.99x of cuBLASLt against the register kernel's 0.68-1.35x).
//
// Contract: A K-contiguous (!transpose_a), B K-contiguous (transpose_b); K, lda, ldb multiples
// of 8 and 16-byte-aligned A and B (the planner checks; others go to the mma.sync kernel).
// CTA = 8 warps over the same 16 rows of B (two groups of 8), each warp a K slice; a lane's
// 16-byte load of B (8 consecutive k of one row) is used directly as the B fragments of two
// m16n8k16 steps. A dot product does not care how k is ordered, so A's fragments are loaded
// with the same k permutation (again 16 bytes per lane): no shared memory, no shuffles.
// Instances m8, m16 and m32 (M <= 8 / 16 / 32): m32 loads four A rows per chunk and runs two
// m16 halves on each B fragment (one B load serves 32 rows of A).
// The 8 slices are summed through shared memory in warp order (deterministic).
// Launched with programmatic dependent launch (gemm_launch_pdl.h): the index set-up overlaps
// the previous kernel's tail, and the loads wait for it (grid_dep_wait).
// Two experiments stay behind knobs, off by default (H200, 2026-11-29, tc bench, GB/s, M = 1
// on 4096^2 / 14336x4096 / 4096x14336; docs/gemm.md round 5):
//  - TC_SKINNY_PREFETCH=1: before grid_dep_wait each CTA asks the TMA unit
//    (cp.async.bulk.prefetch.L2, one request per row) for its 16 rows of B. That is safe even
//    when the previous kernel wrote B (L2 is the point of coherence). 3115 / 3101 / 3086
//    against 2966 / 3702 / 3518 without: +5% on the 33 MB shape, -12..-16% on the 117 MB ones,
//    and -4% at M = 16 on 4096^2.
//  - TC_SKINNY_PERSIST=1: min(units, SMs) CTAs loop over the units, one per SM, so that the
//    next PDL kernel's CTAs fit beside them; each prefetches the next unit (per-line
//    prefetch.global.L2 then): 2368 / 2700 / 2721 against 3126 / 3787 / 3695. One CTA's
//    register-held loads (64 KB per SM) cannot keep DRAM busy.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/knobs.h"
#include "cuda/gemm_kernels.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemm_skinny_bulk.cuh"
#include "cuda/tile/grid_dep.cuh"
#include "cuda/tile/mma.cuh"

namespace tc::cuda {
namespace {

using namespace tc::tile;
using skinny::Args;

constexpr int kWarps = 8, kRows = 16;
// Chunks loaded before the first use (kUnroll): 8 x 2 rows = 16 16-byte loads of B in flight per
// lane when M <= 8 (A rows 8..15 are known zero, so their registers are free), 4 x 2 when
// M <= 16 and when M <= 32 (four A rows per chunk: 128 registers, no spills).

__device__ __forceinline__ uint4 ld_a(const u8* base, bool ok) {
  return ok ? *reinterpret_cast<const uint4*>(base) : uint4{0, 0, 0, 0};
}

// Prefetches the 16 rows x K of B of `unit` into L2: one bulk request per row (rows are
// 16-byte aligned and K * sizeof(T) is a multiple of 16: the planner checks K % 8).
template <class T>
__device__ __forceinline__ void prefetch_unit(const Args& a, i32 unit) {
  const i32 n = unit * kRows + i32(threadIdx.x);
  if (threadIdx.x >= kRows || n >= a.N) return;
  skinny::prefetch_l2(static_cast<const T*>(a.b) + i64(n) * a.ldb, u32(a.K * sizeof(T)));
}

// MT = 8, 16 or 32: the rows of A the instance serves (M <= MT).
template <class T, int MT>
__global__ void __launch_bounds__(256, 2) gemm_skinny_kernel(const Args a) {
  constexpr int kUnroll = MT == 8 ? 8 : 4;
  constexpr int NH = MT / 8;              // 8-row groups of A loaded per chunk
  constexpr int NA = MT == 32 ? 2 : 1;    // m16 halves
  constexpr int MP = MT == 32 ? 32 : 16;  // rows of the partial sums
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  const i32 units = (a.N + kRows - 1) / kRows;
  // K slice of this warp, in chunks of 32 k (one 16-byte load per lane per row).
  const i32 chunks = (a.K + 31) / 32;
  const i32 per = (chunks + kWarps - 1) / kWarps;
  const i32 c0 = warp * per, c1 = min(chunks, c0 + per);
  const T* B = static_cast<const T*>(a.b);
  const T* A = static_cast<const T*>(a.a);
  if (a.prefetch) prefetch_unit<T>(a, blockIdx.x);  // overlaps the previous kernel's tail
  // PDL: launch and index set-up overlapped the previous kernel; memory waits for it.
  grid_dep_wait();
  grid_dep_launch_dependents();
  __shared__ float part[kWarps][MP][16];  // K-slice sums: [warp][m][n 16]
  for (i32 unit = blockIdx.x; unit < units; unit += gridDim.x) {
    if (a.prefetch && unit + i32(gridDim.x) < units) prefetch_unit<T>(a, unit + gridDim.x);
    const i32 n0 = unit * kRows;
    FragC16x8 acc[NA][2] = {};
    const T* brow[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const i32 n = min(n0 + 8 * j + g, a.N - 1);  // clamp: rows past N are computed, not stored
      brow[j] = B + i64(n) * a.ldb;
    }
    for (i32 c = c0; c < c1; c += kUnroll) {
      uint4 w[kUnroll][2], x[kUnroll][NH];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const i32 k = (c + u) * 32 + 8 * q;
        const bool kin = c + u < c1 && k < a.K;
#pragma unroll
        for (int j = 0; j < 2; ++j) w[u][j] = kin ? ld_stream_16(brow[j] + k) : uint4{0, 0, 0, 0};
#pragma unroll
        for (int h = 0; h < NH; ++h)
          x[u][h] = ld_a(reinterpret_cast<const u8*>(A + i64(g + 8 * h) * a.lda + k),
                         kin && g + 8 * h < a.M);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int h = 0; h < NA; ++h) {
          // Step s uses k offsets 4s..4s+3 of the lane's 8: (4s, 4s+1) as logical 2q.., and
          // (4s+2, 4s+3) as logical 2q+8.. (same mapping for A and B). MT = 8: rows 8..15 zero.
          const uint4 lo = x[u][NH > 1 ? 2 * h : 0];
          uint4 hi{0, 0, 0, 0};
          if constexpr (NH > 1) hi = x[u][2 * h + 1];
          const FragA16x16 fa0{{lo.x, hi.x, lo.y, hi.y}}, fa1{{lo.z, hi.z, lo.w, hi.w}};
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            mma_16816<T>(acc[h][j], fa0, FragB16x8{{w[u][j].x, w[u][j].y}});
            mma_16816<T>(acc[h][j], fa1, FragB16x8{{w[u][j].z, w[u][j].w}});
          }
        }
      }
    }
#pragma unroll
    for (int h = 0; h < NA; ++h)
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          part[warp][16 * h + g + 8 * (e / 2)][8 * j + 2 * q + e % 2] = acc[h][j].r[e];
    __syncthreads();
    for (int i = threadIdx.x; i < MP * 16; i += 256) {
      const int m = i / 16, nn = i % 16;
      const i32 n = n0 + nn;
      if (m < a.M && n < a.N) {
        float s = 0;
#pragma unroll
        for (int w2 = 0; w2 < kWarps; ++w2) s += part[w2][m][nn];  // warp order: deterministic
        skinny::store_c(a, m, n, s);
      }
    }
    __syncthreads();  // `part` is refilled by the next unit
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

}  // namespace

bool plan_gemm_skinny(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan,
                      std::string& why) {
  const tc_gemm_desc& d = p.d;
  const bool t16 = (d.a_dtype == TC_DTYPE_F16 || d.a_dtype == TC_DTYPE_BF16) &&
                   d.b_dtype == d.a_dtype && d.accum_dtype == TC_DTYPE_F32 &&
                   (d.c_dtype == d.a_dtype || d.c_dtype == TC_DTYPE_F32);
  if (!t16 || dev.cc_major < 8) {
    why = "skinny kernel: f16/bf16 on sm_80+ only";
    return false;
  }
  if (d.M > 32 || p.batch != 1 || d.transpose_a || !d.transpose_b) {
    why = "skinny kernel: needs M <= 32, batch 1, A row-major and B stored N x K";
    return false;
  }
  if (d.K % 8 || d.lda % 8 || d.ldb % 8 || !aligned16(p.a) || !aligned16(p.b)) {
    why = "skinny kernel: K, lda, ldb must be multiples of 8 and A, B 16-byte aligned";
    return false;
  }
  plan->workspace_bytes = 0;
  // The register kernel below, unless TC_SKINNY_BULK=1 or p.variant 2 asks for the ring kernel
  // (gemm_skinny_bulk.cu, sm_90+; measured slower on every decode cell, H200 2026-11-29, see
  // its header). TC_SKINNY_BULK=0 or p.variant 1 forces the register kernel past the M > 16
  // shape rule. The knob is read per plan, so the bench, the lab and the tests can A/B them.
  const char* bulk = knobs::get(knobs::kSkinnyBulk);
  const bool force_regs = p.variant == 1 || (bulk && std::strcmp(bulk, "0") == 0);
  const bool force_bulk = p.variant == 2 || (bulk && std::strcmp(bulk, "1") == 0);
  if (force_bulk) {
    if (skinny::plan_skinny_bulk(p, dev, plan)) return true;
    why = "skinny kernel: TC_SKINNY_BULK=1 and the ring kernel needs sm_90+ and K > 0";
    return false;
  }
  // M = 17..32 (m32 instance): on W 14336x4096 it streamed 2.49-2.75 TB/s against the wgmma
  // kernel's 3.26 (64x128 tiles have columns enough when N >= 2K); on 4096^2 and 4096x14336 it
  // beat wgmma (2.41-2.58 against 2.06-2.12; 2.73-3.11 against 2.3-2.4). H200, 2026-11-29.
  if (d.M > 16 && d.N >= 2 * int64_t(d.K) && !force_regs) {
    why = "skinny kernel: M > 16 with N >= 2K is left to the wgmma kernel";
    return false;
  }
  const int mt = d.M > 16 ? 32 : d.M > 8 ? 16 : 8;
  plan->stages = 0;  // the register kernel
  plan->name = std::string("gemm_skinny_") + (d.a_dtype == TC_DTYPE_F16 ? "f16" : "bf16") +
               "_f32_nt_m" + std::to_string(mt) + "_n16_w8_u" + (mt == 8 ? "8" : "4") +
               "_aligned16";
  // Experiments, both off (measured no faster, see the header): TC_SKINNY_PREFETCH=1 and
  // TC_SKINNY_PERSIST=1 (read per plan, so the bench and lab can A/B them).
  const int units = (d.N + kRows - 1) / kRows;
  const char* pf = knobs::get(knobs::kSkinnyPrefetch);
  const char* persist = knobs::get(knobs::kSkinnyPersist);
  plan->prefetch = pf && std::strcmp(pf, "1") == 0;
  plan->grid = persist && std::strcmp(persist, "1") == 0 ? std::min(units, dev.sm_count) : units;
  if (plan->prefetch) plan->name += "_pf";
  if (plan->grid < units) plan->name += "_persist";
  return true;
}

namespace skinny {
Args make_args(const GemmProblem& p, const GemmPlan& plan) {
  const tc_gemm_desc& d = p.d;
  Args r{};
  r.a = p.a, r.b = p.b, r.c = p.c;
  r.M = d.M, r.N = d.N, r.K = d.K;
  r.lda = d.lda, r.ldb = d.ldb, r.ldc = d.ldc;
  r.alpha = d.alpha, r.beta = d.beta;
  r.c_type = d.c_dtype == TC_DTYPE_F32 ? 0 : d.c_dtype == TC_DTYPE_F16 ? 1 : 2;
  r.prefetch = plan.prefetch ? 1 : 0;
  return r;
}
}  // namespace skinny

tc_status_t launch_gemm_skinny(const GemmProblem& p, const GemmPlan& plan) {
  if (plan.stages > 0) return skinny::launch_skinny_bulk(p, plan);
  const tc_gemm_desc& d = p.d;
  const Args a = skinny::make_args(p, plan);
  auto stream = static_cast<cudaStream_t>(p.stream);
  const bool f16 = d.a_dtype == TC_DTYPE_F16;
  auto kernel = d.M > 16  ? (f16 ? gemm_skinny_kernel<tile::f16, 32> : gemm_skinny_kernel<bf16, 32>)
                : d.M > 8 ? (f16 ? gemm_skinny_kernel<tile::f16, 16> : gemm_skinny_kernel<bf16, 16>)
                          : (f16 ? gemm_skinny_kernel<tile::f16, 8> : gemm_skinny_kernel<bf16, 8>);
  const cudaError_t e = launch_maybe_pdl(kernel, dim3(plan.grid), dim3(256), 0, stream, 1, a);
  return e == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

}  // namespace tc::cuda
