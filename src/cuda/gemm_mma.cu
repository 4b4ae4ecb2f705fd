// Portable tensor-core GEMM (sm_80+): mma.sync m16n8k16, f16/bf16 in, f32 accumulate,
// C = alpha * op(A) op(B) + beta * C in f16/bf16/f32. Serves what TMA cannot (any leading
// dimension, any pointer alignment, any transposes) and GPUs without wgmma.
//
// Contract: CTA 128 x 128 x 32, 256 threads = 8 warps (2 along M x 4 along N, 64 x 32 each:
// 4 x 4 m16n8 fragments, 64 f32 accumulators per thread). Operands are staged K-contiguous in
// shared memory ([128][40] halves per operand and buffer: the 80-byte row pitch makes the
// eight 16-byte rows of each ldmatrix phase hit distinct banks), two buffers, the next tile
// prefetched into registers during the current tile's MMAs. Global loads are 16-byte vectors
// when the operand is K-contiguous with 16-byte-aligned rows, else predicated 2-byte loads,
// coalesced along whichever dimension is contiguous. Edges are zero-filled; the epilogue masks.
#include <cuda_runtime.h>

#include "cuda/gemm_kernels.h"
#include "cuda/tile/mma.cuh"

namespace tc::cuda {
namespace {

using namespace tc::tile;

constexpr int BM = 128, BN = 128, BK = 32, LDS = 40;

struct MmaArgs {
  const void* a;
  const void* b;
  void* c;
  i32 M, N, K;
  i64 lda, ldb, ldc, sa, sb, sc;
  float alpha, beta;
  i32 ta, tb;        // stored transposes (as in tc_gemm_desc)
  i32 vec_a, vec_b;  // operand is K-contiguous with 16-byte rows: vector loads
  i32 c_type;        // 0 f32, 1 f16, 2 bf16
};

// Loads a 128 (rows: m or n) x 32 (k) tile of one operand into registers. `kmaj`: element
// (r, k) at p[r * ld + k]; else at p[k * ld + r].
struct Stage {
  uint4 v[2];  // vector path: rows t / 4 and t / 4 + 64, k 8 (t % 4)
  u16 s[16];   // scalar path
};

__device__ __forceinline__ void load_tile(Stage& st, const u16* p, i64 ld, i32 rows, i32 K, i32 r0,
                                          i32 k0, bool kmaj, bool vec) {
  const int t = threadIdx.x;
  if (vec) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const i32 r = r0 + t / 4 + 64 * i, k = k0 + 8 * (t % 4);
      st.v[i] =
          (r < rows && k < K) ? *reinterpret_cast<const uint4*>(p + r * ld + k) : uint4{0, 0, 0, 0};
    }
  } else if (kmaj) {
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const i32 r = r0 + t / 32 + 8 * i, k = k0 + t % 32;
      st.s[i] = (r < rows && k < K) ? p[r * ld + k] : u16(0);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const i32 r = r0 + t % 128, k = k0 + t / 128 + 2 * i;
      st.s[i] = (r < rows && k < K) ? p[k * ld + r] : u16(0);
    }
  }
}

__device__ __forceinline__ void store_tile(const Stage& st, u16 (*s)[LDS], bool kmaj, bool vec) {
  const int t = threadIdx.x;
  if (vec) {
#pragma unroll
    for (int i = 0; i < 2; ++i)
      *reinterpret_cast<uint4*>(&s[t / 4 + 64 * i][8 * (t % 4)]) = st.v[i];
  } else if (kmaj) {
#pragma unroll
    for (int i = 0; i < 16; ++i) s[t / 32 + 8 * i][t % 32] = st.s[i];
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i) s[t % 128][t / 128 + 2 * i] = st.s[i];
  }
}

template <class OutT>
__device__ __forceinline__ void store_out(const MmaArgs& a, OutT* c, i32 row, i32 col, float v) {
  if (row >= a.M || col >= a.N) return;
  OutT* p = c + row * a.ldc + col;
  v *= a.alpha;
  if (a.beta != 0.0f) v += a.beta * to_f32(*p);
  *p = from_f32<OutT>(v);
}

template <class T, class OutT>
__device__ __forceinline__ void epilogue(const MmaArgs& a, const FragC16x8 (&acc)[4][4], i32 m0,
                                         i32 n0) {
  OutT* c = static_cast<OutT*>(a.c) + blockIdx.z * a.sc;
  const int lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      const i32 r = m0 + 16 * mi + g, col = n0 + 8 * ni + 2 * q;
      store_out(a, c, r, col, acc[mi][ni].r[0]);
      store_out(a, c, r, col + 1, acc[mi][ni].r[1]);
      store_out(a, c, r + 8, col, acc[mi][ni].r[2]);
      store_out(a, c, r + 8, col + 1, acc[mi][ni].r[3]);
    }
}

template <class T>
__global__ void __launch_bounds__(256) gemm_mma_kernel(const MmaArgs a) {
  __shared__ alignas(16) u16 sA[2][BM][LDS];
  __shared__ alignas(16) u16 sB[2][BN][LDS];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / 4, wn = warp % 4;  // warp tile: rows 64 wm, cols 32 wn
  const i32 m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const u16* A = static_cast<const u16*>(a.a) + blockIdx.z * a.sa;
  const u16* B = static_cast<const u16*>(a.b) + blockIdx.z * a.sb;
  const bool akm = !a.ta, bkm = a.tb;  // K-contiguous storage
  FragC16x8 acc[4][4] = {};
  Stage sta, stb;
  load_tile(sta, A, a.lda, a.M, a.K, m0, 0, akm, a.vec_a);
  load_tile(stb, B, a.ldb, a.N, a.K, n0, 0, bkm, a.vec_b);
  store_tile(sta, sA[0], akm, a.vec_a);
  store_tile(stb, sB[0], bkm, a.vec_b);
  __syncthreads();
  const i32 tiles = (a.K + BK - 1) / BK;
  for (i32 kt = 0; kt < tiles; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < tiles) {
      load_tile(sta, A, a.lda, a.M, a.K, m0, (kt + 1) * BK, akm, a.vec_a);
      load_tile(stb, B, a.ldb, a.N, a.K, n0, (kt + 1) * BK, bkm, a.vec_b);
    }
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      FragA16x16 fa[4];
      FragB16x8 fb[4];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
        ldmatrix_x4(fa[mi].r, &sA[buf][64 * wm + 16 * mi + lane % 16][16 * ks + 8 * (lane / 16)]);
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) {
        u32 r[4];
        ldmatrix_x4(r, &sB[buf][32 * wn + 16 * nj + lane % 8 + 8 * (lane / 16)]
                          [16 * ks + 8 * ((lane / 8) % 2)]);
        fb[2 * nj] = FragB16x8{{r[0], r[1]}};
        fb[2 * nj + 1] = FragB16x8{{r[2], r[3]}};
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) mma_16816<T>(acc[mi][ni], fa[mi], fb[ni]);
    }
    if (kt + 1 < tiles) {
      store_tile(sta, sA[buf ^ 1], akm, a.vec_a);
      store_tile(stb, sB[buf ^ 1], bkm, a.vec_b);
    }
    __syncthreads();
  }
  const i32 wm0 = m0 + 64 * wm, wn0 = n0 + 32 * wn;
  if (a.c_type == 0)
    epilogue<T, float>(a, acc, wm0, wn0);
  else if (a.c_type == 1)
    epilogue<T, f16>(a, acc, wm0, wn0);
  else
    epilogue<T, bf16>(a, acc, wm0, wn0);
}

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

}  // namespace

bool plan_gemm_mma(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan, std::string& why) {
  const tc_gemm_desc& d = p.d;
  const bool t16 = (d.a_dtype == TC_DTYPE_F16 || d.a_dtype == TC_DTYPE_BF16) &&
                   d.b_dtype == d.a_dtype && d.accum_dtype == TC_DTYPE_F32 &&
                   (d.c_dtype == d.a_dtype || d.c_dtype == TC_DTYPE_F32);
  if (!t16 || dev.cc_major < 8) {
    why = "mma.sync kernel: f16/bf16 on sm_80+ only";
    return false;
  }
  if (p.batch > 65535 || (d.M + BM - 1) / BM > 65535) {
    why = "mma.sync kernel: batch or M tiles beyond the grid limit";
    return false;
  }
  plan->name = std::string("gemm_mma_") + (d.a_dtype == TC_DTYPE_F16 ? "f16" : "bf16") + "_f32_" +
               (d.transpose_a ? "t" : "n") + (d.transpose_b ? "t" : "n") +
               "_bm128_bn128_bk32_s2_any";
  plan->grid = 0;
  plan->workspace_bytes = 0;
  return true;
}

tc_status_t launch_gemm_mma(const GemmProblem& p, const GemmPlan&) {
  const tc_gemm_desc& d = p.d;
  MmaArgs a{};
  a.a = p.a;
  a.b = p.b;
  a.c = p.c;
  a.M = d.M;
  a.N = d.N;
  a.K = d.K;
  a.lda = d.lda;
  a.ldb = d.ldb;
  a.ldc = d.ldc;
  a.sa = p.stride_a;
  a.sb = p.stride_b;
  a.sc = p.stride_c;
  a.alpha = d.alpha;
  a.beta = d.beta;
  a.ta = d.transpose_a;
  a.tb = d.transpose_b;
  const bool batch_ok_a = p.batch == 1 || p.stride_a % 8 == 0;
  const bool batch_ok_b = p.batch == 1 || p.stride_b % 8 == 0;
  a.vec_a = !d.transpose_a && d.K % 8 == 0 && d.lda % 8 == 0 && aligned16(p.a) && batch_ok_a;
  a.vec_b = d.transpose_b && d.K % 8 == 0 && d.ldb % 8 == 0 && aligned16(p.b) && batch_ok_b;
  a.c_type = d.c_dtype == TC_DTYPE_F32 ? 0 : d.c_dtype == TC_DTYPE_F16 ? 1 : 2;
  dim3 grid((d.N + BN - 1) / BN, (d.M + BM - 1) / BM, p.batch);
  auto stream = static_cast<cudaStream_t>(p.stream);
  if (d.a_dtype == TC_DTYPE_F16)
    gemm_mma_kernel<f16><<<grid, 256, 0, stream>>>(a);
  else
    gemm_mma_kernel<bf16><<<grid, 256, 0, stream>>>(a);
  return cudaGetLastError() == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

}  // namespace tc::cuda
