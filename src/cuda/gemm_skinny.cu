// Decode GEMM, M <= 16: C[M,N] = alpha * A[M,K] B[N,K]^T + beta * C (B = weights, transpose_b).
// Memory-bound: B is streamed once at (near) copy bandwidth; A (<= 16 rows) stays in L1/L2.
//
// Contract: A K-contiguous (!transpose_a), B K-contiguous (transpose_b); K, lda, ldb multiples
// of 8 and 16-byte-aligned A and B (the planner checks; others go to the mma.sync kernel).
// CTA = 8 warps over the same 16 rows of B (two groups of 8), each warp a K slice; a lane's
// 16-byte load of B (8 consecutive k of one row) is used directly as the B fragments of two
// m16n8k16 steps. A dot product does not care how k is ordered, so A's fragments are loaded
// with the same k permutation (again 16 bytes per lane): no shared memory, no shuffles.
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

#include "cuda/gemm_kernels.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/tile/grid_dep.cuh"
#include "cuda/tile/mma.cuh"

namespace tc::cuda {
namespace {

using namespace tc::tile;

constexpr int kWarps = 8, kRows = 16;
// Chunks loaded before the first use: 8 x 2 rows = 16 16-byte loads in flight per lane when
// M <= 8 (A rows 8..15 are known zero, so their registers are free), 4 x 2 when M <= 16.

struct SkinnyArgs {
  const void* a;
  const void* b;
  void* c;
  i32 M, N, K;
  i64 lda, ldb, ldc;
  float alpha, beta;
  i32 c_type;    // 0 f32, 1 f16, 2 bf16
  i32 prefetch;  // TC_SKINNY_PREFETCH=1: L2 prefetch of each unit before its loads
};

__device__ __forceinline__ uint4 ld_a(const u8* base, bool ok) {
  return ok ? *reinterpret_cast<const uint4*>(base) : uint4{0, 0, 0, 0};
}

// Prefetches the 16 rows x K of B of `unit` into L2: one bulk request per row (rows are
// 16-byte aligned and K * sizeof(T) is a multiple of 16: the planner checks K % 8).
template <class T>
__device__ __forceinline__ void prefetch_unit(const SkinnyArgs& a, i32 unit) {
  const i32 n = unit * kRows + i32(threadIdx.x);
  if (threadIdx.x >= kRows || n >= a.N) return;
  const T* p = static_cast<const T*>(a.b) + i64(n) * a.ldb;
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(u32(a.K * sizeof(T)))
               : "memory");
}

template <class T, bool M16>
__global__ void __launch_bounds__(256, 2) gemm_skinny_kernel(const SkinnyArgs a) {
  constexpr int kUnroll = M16 ? 4 : 8;
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
  __shared__ float part[kWarps][16][16];  // K-slice sums: [warp][m 16][n 16]
  const bool row0 = g < a.M, row1 = g + 8 < a.M;
  for (i32 unit = blockIdx.x; unit < units; unit += gridDim.x) {
    if (a.prefetch && unit + i32(gridDim.x) < units) prefetch_unit<T>(a, unit + gridDim.x);
    const i32 n0 = unit * kRows;
    FragC16x8 acc[2] = {};
    const T* brow[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const i32 n = min(n0 + 8 * j + g, a.N - 1);  // clamp: rows past N are computed, not stored
      brow[j] = B + i64(n) * a.ldb;
    }
    for (i32 c = c0; c < c1; c += kUnroll) {
      uint4 w[kUnroll][2], x0[kUnroll], x1[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const i32 k = (c + u) * 32 + 8 * q;
        const bool kin = c + u < c1 && k < a.K;
#pragma unroll
        for (int j = 0; j < 2; ++j) w[u][j] = kin ? ld_stream_16(brow[j] + k) : uint4{0, 0, 0, 0};
        x0[u] = ld_a(reinterpret_cast<const u8*>(A + i64(g) * a.lda + k), kin && row0);
        x1[u] = M16 ? ld_a(reinterpret_cast<const u8*>(A + i64(g + 8) * a.lda + k), kin && row1)
                    : uint4{0, 0, 0, 0};
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        // Step s uses k offsets 4s..4s+3 of the lane's 8: (4s, 4s+1) as logical 2q.., and
        // (4s+2, 4s+3) as logical 2q+8.. (same mapping for A and B).
        const FragA16x16 fa0{{x0[u].x, x1[u].x, x0[u].y, x1[u].y}};
        const FragA16x16 fa1{{x0[u].z, x1[u].z, x0[u].w, x1[u].w}};
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          mma_16816<T>(acc[j], fa0, FragB16x8{{w[u][j].x, w[u][j].y}});
          mma_16816<T>(acc[j], fa1, FragB16x8{{w[u][j].z, w[u][j].w}});
        }
      }
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      part[warp][g][8 * j + 2 * q] = acc[j].r[0];
      part[warp][g][8 * j + 2 * q + 1] = acc[j].r[1];
      part[warp][g + 8][8 * j + 2 * q] = acc[j].r[2];
      part[warp][g + 8][8 * j + 2 * q + 1] = acc[j].r[3];
    }
    __syncthreads();
    const int m = threadIdx.x / 16, nn = threadIdx.x % 16;
    const i32 n = n0 + nn;
    if (m < a.M && n < a.N) {
      float s = 0;
#pragma unroll
      for (int w2 = 0; w2 < kWarps; ++w2) s += part[w2][m][nn];  // warp order: deterministic
      s *= a.alpha;
      const i64 off = i64(m) * a.ldc + n;
      if (a.c_type == 0) {
        float* c = static_cast<float*>(a.c) + off;
        *c = a.beta != 0.0f ? s + a.beta * *c : s;
      } else if (a.c_type == 1) {
        f16* c = static_cast<f16*>(a.c) + off;
        *c = from_f32<f16>(a.beta != 0.0f ? s + a.beta * to_f32(*c) : s);
      } else {
        bf16* c = static_cast<bf16*>(a.c) + off;
        *c = from_f32<bf16>(a.beta != 0.0f ? s + a.beta * to_f32(*c) : s);
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
  if (d.M > 16 || p.batch != 1 || d.transpose_a || !d.transpose_b) {
    why = "skinny kernel: needs M <= 16, batch 1, A row-major and B stored N x K";
    return false;
  }
  if (d.K % 8 || d.lda % 8 || d.ldb % 8 || !aligned16(p.a) || !aligned16(p.b)) {
    why = "skinny kernel: K, lda, ldb must be multiples of 8 and A, B 16-byte aligned";
    return false;
  }
  plan->name = std::string("gemm_skinny_") + (d.a_dtype == TC_DTYPE_F16 ? "f16" : "bf16") +
               "_f32_nt_m" + (d.M > 8 ? "16" : "8") + "_n16_w8_u" + (d.M > 8 ? "4" : "8") +
               "_aligned16";
  // Experiments, both off (measured no faster, see the header): TC_SKINNY_PREFETCH=1 and
  // TC_SKINNY_PERSIST=1 (read per plan, so the bench and lab can A/B them).
  const int units = (d.N + kRows - 1) / kRows;
  const char* pf = std::getenv("TC_SKINNY_PREFETCH");
  const char* persist = std::getenv("TC_SKINNY_PERSIST");
  plan->prefetch = pf && std::strcmp(pf, "1") == 0;
  plan->grid = persist && std::strcmp(persist, "1") == 0 ? std::min(units, dev.sm_count) : units;
  if (plan->prefetch) plan->name += "_pf";
  if (plan->grid < units) plan->name += "_persist";
  plan->workspace_bytes = 0;
  return true;
}

tc_status_t launch_gemm_skinny(const GemmProblem& p, const GemmPlan& plan) {
  const tc_gemm_desc& d = p.d;
  SkinnyArgs a{p.a,
               p.b,
               p.c,
               d.M,
               d.N,
               d.K,
               d.lda,
               d.ldb,
               d.ldc,
               d.alpha,
               d.beta,
               d.c_dtype == TC_DTYPE_F32   ? 0
               : d.c_dtype == TC_DTYPE_F16 ? 1
                                           : 2,
               plan.prefetch ? 1 : 0};
  auto stream = static_cast<cudaStream_t>(p.stream);
  const bool m16 = d.M > 8;
  auto kernel = d.a_dtype == TC_DTYPE_F16
                    ? (m16 ? gemm_skinny_kernel<f16, true> : gemm_skinny_kernel<f16, false>)
                    : (m16 ? gemm_skinny_kernel<bf16, true> : gemm_skinny_kernel<bf16, false>);
  const cudaError_t e = launch_maybe_pdl(kernel, dim3(plan.grid), dim3(256), 0, stream, 1, a);
  return e == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

}  // namespace tc::cuda
