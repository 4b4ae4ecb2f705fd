// Exact f32 GEMM on the FP32 pipes (SIMT FFMA): C = alpha * op(A) op(B) + beta * C with every
// product and sum in f32, so the error against float64 is that of f32 accumulation (~1e-7
// rms). TF32 (accum_dtype TC_DTYPE_TF32) is not served here: it is left to cuBLASLt's row.
//
// Contract: CTA 128 x 128 x 8, 256 threads, each an 8 x 8 block of outputs split as rows
// {4 ty.., 64 + 4 ty..} x cols {4 tx.., 64 + 4 tx..} so that its shared-memory reads are
// float4 and conflict-free. Shared memory holds A^T and B as [8][128] (k-major), two buffers,
// the next tile prefetched into registers during the current tile's FMAs. Any ld, alignment,
// transposes; loads are scalar and coalesced along whichever dimension is contiguous.
// Accuracy: a single running f32 sum over K = 8192 terms measured 1.7e-6 rms against float64
// (cuBLAS SGEMM: the same). So the registers sum chunks of 128 k, and each chunk is added to a
// total kept in shared memory (64 floats per thread, conflict-free as [64][256]): the rounding
// error then grows with sqrt(128) + sqrt(K / 128) instead of sqrt(K).
#include <cuda_runtime.h>

#include "cuda/gemm_kernels.h"
#include "cuda/tile/types.cuh"

namespace tc::cuda {
namespace {

using namespace tc::tile;

struct F32Args {
  const float* a;
  const float* b;
  float* c;
  i32 M, N, K;
  i64 lda, ldb, ldc, sa, sb, sc;
  float alpha, beta;
  i32 ta, tb;
};

// Element e (0..1023) of a 128 x 8 operand tile as (r, k): k fastest when the operand is
// K-contiguous in memory, r fastest otherwise, so a warp's loads are contiguous.
__device__ __forceinline__ float load_elem(const float* p, i64 ld, bool kcontig, i32 rows, i32 K,
                                           i32 r0, i32 k0, int e, int& r, int& k) {
  if (kcontig) {
    r = e / 8;
    k = e % 8;
  } else {
    r = e % 128;
    k = e / 128;
  }
  const i32 gr = r0 + r, gk = k0 + k;
  if (gr >= rows || gk >= K) return 0.0f;
  return kcontig ? p[gr * ld + gk] : p[gk * ld + gr];
}

__global__ void __launch_bounds__(256) gemm_f32_kernel(const F32Args a) {
  __shared__ alignas(16) float sA[2][8][128];
  __shared__ alignas(16) float sB[2][8][128];
  extern __shared__ float total[];  // [64][256]: chunk sums, thread-minor
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const i32 m0 = blockIdx.y * 128, n0 = blockIdx.x * 128;
  const float* A = a.a + blockIdx.z * a.sa;
  const float* B = a.b + blockIdx.z * a.sb;
  const bool akc = !a.ta, bkc = a.tb;
  float ra[4], rb[4];
  int rr[2][4], kk[2][4];
  auto fetch = [&](i32 k0) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      ra[i] = load_elem(A, a.lda, akc, a.M, a.K, m0, k0, t + 256 * i, rr[0][i], kk[0][i]);
      rb[i] = load_elem(B, a.ldb, bkc, a.N, a.K, n0, k0, t + 256 * i, rr[1][i], kk[1][i]);
    }
  };
  auto put = [&](int buf) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      sA[buf][kk[0][i]][rr[0][i]] = ra[i];
      sB[buf][kk[1][i]][rr[1][i]] = rb[i];
    }
  };
  float acc[8][8] = {};
#pragma unroll
  for (int j = 0; j < 64; ++j) total[j * 256 + t] = 0.0f;
  fetch(0);
  put(0);
  __syncthreads();
  const i32 tiles = (a.K + 7) / 8;
  for (i32 kt = 0; kt < tiles; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < tiles) fetch((kt + 1) * 8);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      float av[8], bv[8];
      *reinterpret_cast<float4*>(av) = *reinterpret_cast<const float4*>(&sA[buf][k][4 * ty]);
      *reinterpret_cast<float4*>(av + 4) =
          *reinterpret_cast<const float4*>(&sA[buf][k][64 + 4 * ty]);
      *reinterpret_cast<float4*>(bv) = *reinterpret_cast<const float4*>(&sB[buf][k][4 * tx]);
      *reinterpret_cast<float4*>(bv + 4) =
          *reinterpret_cast<const float4*>(&sB[buf][k][64 + 4 * tx]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    if (kt + 1 < tiles) put(buf ^ 1);
    if ((kt & 15) == 15 || kt + 1 == tiles) {  // close a 128-k chunk
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          total[(8 * i + j) * 256 + t] += acc[i][j];
          acc[i][j] = 0.0f;
        }
    }
    __syncthreads();
  }
  float* C = a.c + blockIdx.z * a.sc;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const i32 row = m0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4);
    if (row >= a.M) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const i32 col = n0 + (j < 4 ? 4 * tx + j : 64 + 4 * tx + j - 4);
      if (col >= a.N) continue;
      float* p = C + row * a.ldc + col;
      const float v = a.alpha * total[(8 * i + j) * 256 + t];
      *p = a.beta != 0.0f ? v + a.beta * *p : v;
    }
  }
}

}  // namespace

bool plan_gemm_f32(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan, std::string& why) {
  const tc_gemm_desc& d = p.d;
  if (d.a_dtype != TC_DTYPE_F32 || d.b_dtype != TC_DTYPE_F32 || d.c_dtype != TC_DTYPE_F32 ||
      d.accum_dtype != TC_DTYPE_F32) {
    why = "f32 kernel: exact f32 only (accum_dtype TF32 goes to cuBLASLt)";
    return false;
  }
  if (dev.cc_major < 7 || p.batch > 65535 || (d.M + 127) / 128 > 65535) {
    why = "f32 kernel: needs sm_70+ and batch, M tiles within the grid limit";
    return false;
  }
  plan->name = std::string("gemm_simt_f32_f32_") + (d.transpose_a ? "t" : "n") +
               (d.transpose_b ? "t" : "n") + "_bm128_bn128_bk8_t8x8_s2_any";
  plan->grid = 0;
  plan->workspace_bytes = 0;
  return true;
}

tc_status_t launch_gemm_f32(const GemmProblem& p, const GemmPlan&) {
  const tc_gemm_desc& d = p.d;
  F32Args a{static_cast<const float*>(p.a),
            static_cast<const float*>(p.b),
            static_cast<float*>(p.c),
            d.M,
            d.N,
            d.K,
            d.lda,
            d.ldb,
            d.ldc,
            p.stride_a,
            p.stride_b,
            p.stride_c,
            d.alpha,
            d.beta,
            d.transpose_a,
            d.transpose_b};
  dim3 grid((d.N + 127) / 128, (d.M + 127) / 128, p.batch);
  constexpr int smem = 64 * 256 * 4;  // chunk totals (the tiles are static shared memory)
  static bool raised =
      cudaFuncSetAttribute(gemm_f32_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) ==
      cudaSuccess;
  if (!raised) return TC_ERROR_BACKEND_FAILURE;
  gemm_f32_kernel<<<grid, 256, smem, static_cast<cudaStream_t>(p.stream)>>>(a);
  return cudaGetLastError() == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

}  // namespace tc::cuda
