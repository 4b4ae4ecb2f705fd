#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "mma.cuh"
#include "phobos_mma_map.h"

static __device__ __forceinline__ float ph_ld(float x) { return x; }
static __device__ __forceinline__ float ph_ld(__half x) { return __half2float(x); }
static __device__ __forceinline__ float ph_ld(__nv_bfloat16 x) { return __bfloat162float(x); }
static __device__ __forceinline__ int ph_ld(int x) { return x; }
static __device__ __forceinline__ int ph_ld(signed char x) { return x; }
static __device__ __forceinline__ bool ph_ld(bool x) { return x; }
static __device__ __forceinline__ void ph_st(float* p, float v) { *p = v; }
static __device__ __forceinline__ void ph_st(__half* p, float v) { *p = __float2half_rn(v); }
static __device__ __forceinline__ void ph_st(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
static __device__ __forceinline__ void ph_st(int* p, float v) { *p = (int)v; }
static __device__ __forceinline__ void ph_st(signed char* p, float v) { *p = (signed char)(int)v; }
static __device__ __forceinline__ void ph_st(bool* p, float v) { *p = v != 0.0f; }
static __device__ __forceinline__ float ph_rh(float x) { return __half2float(__float2half_rn(x)); }
static __device__ __forceinline__ float ph_rb(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }
static __device__ __forceinline__ float ph_f4(float4 v, int u) {
  return u == 0 ? v.x : u == 1 ? v.y : u == 2 ? v.z : v.w;
}
static __device__ __forceinline__ int ph_cdiv(int a, int b) { return b == 0 ? 0 : (a + b - 1) / b; }
static __device__ __forceinline__ int ph_div(int a, int b) { return b == 0 ? 0 : a / b; }
static __device__ __forceinline__ int ph_mod(int a, int b) { return b == 0 ? 0 : a % b; }
static __device__ __forceinline__ int ph_min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ int ph_max(int a, int b) { return a > b ? a : b; }
static __device__ __forceinline__ float ph_min(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b); }
static __device__ __forceinline__ float ph_max(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b); }
static __device__ __forceinline__ float ph_sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }
static __device__ __forceinline__ float ph_silu(float x) { return x / (1.0f + __expf(-x)); }
static __device__ __forceinline__ float ph_relu(float x) { return x > 0.0f ? x : 0.0f; }
static __device__ __forceinline__ int ph_relu(int x) { return x > 0 ? x : 0; }
static __device__ __forceinline__ float ph_rsqrt(float x) { return rsqrtf(x); }
static __device__ __forceinline__ float ph_tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
static __device__ __forceinline__ float ph_gelu(float x) {
  // tanh form (spec §3). The hardware tanh (MUFU, max relative error 2^-10.99) keeps a GEMM's
  // GELU epilogue to a few instructions per element; f16 outputs stay within the tolerance.
  return 0.5f * x * (1.0f + ph_tanh_approx(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
// cp.async (sm_80+): 16 bytes global -> shared, bypassing L1; groups committed and awaited
// by count (PTX ISA "cp.async"). Not in the shared tile library (which has the bulk forms).
static __device__ __forceinline__ void ph_cp_async16(void* smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
               :: "r"(tc::tile::smem_addr(smem)), "l"(gmem) : "memory");
}
static __device__ __forceinline__ void ph_cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
static __device__ __forceinline__ void ph_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
// Orders generic-proxy shared writes (st.shared, cp.async) before async-proxy reads (wgmma).
static __device__ __forceinline__ void ph_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// ldmatrix with .trans (the B operand of dot, stored [k][n]): the shared tile library has only
// the non-transposed forms, so these two live here (PTX ISA "ldmatrix").
static __device__ __forceinline__ void ph_ldmatrix_x4_trans(tc::tile::u32 (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(tc::tile::smem_addr(p)));
}
static __device__ __forceinline__ void ph_ldmatrix_x2_trans(tc::tile::u32 (&r)[2], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
               : "=r"(r[0]), "=r"(r[1]) : "r"(tc::tile::smem_addr(p)));
}

// hgemm: 128 threads, 9728 bytes of shared memory
extern "C" __global__ void __launch_bounds__(128) phobos_hgemm_BM64_BN64_BK32(__half* __restrict__ A, __half* __restrict__ B, __half* __restrict__ C, int d_M, int d_K, int d_N) {
  const int tid = (int)threadIdx.x;
  (void)tid;
  extern __shared__ __align__(16) unsigned char ph_smem[];
  __half* r_a = reinterpret_cast<__half*>(ph_smem + 0);  // tile<f16>[64, 32]
  __half* r_b = reinterpret_cast<__half*>(ph_smem + 5120);  // tile<f16>[32, 64]
  float r_acc[32];
  #pragma unroll
  for (int i0 = 0; i0 < 32; ++i0) {
    const int r1 = (tid / 32 / 2) * 32 + (i0 / 16) * 16 + ph_c_row(tid % 32, i0 % 4);
    const int c2 = (tid / 32 % 2) * 32 + ((i0 / 4) % 4) * 8 + ph_c_col(tid % 32, i0 % 4);
    (void)r1;
    (void)c2;
    r_acc[i0] = 0.0f;
  }
  for (int r_kt = 0; r_kt < d_K; r_kt += 32) {
    __syncthreads();
    for (int e3 = tid; e3 < 256; e3 += 128) {
      const int r4 = e3 / 4, c5 = e3 % 4;
      (void)r4;
      (void)c5;
      uint4 ph_chunk;
      {
        const __half* ph_src = &A[((((int)blockIdx.x * 64) + r4)) * d_K + (r_kt + (c5) * 8)];
        if ((reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
          ph_chunk = *reinterpret_cast<const uint4*>(ph_src);
        } else {
          __align__(16) __half ph_t[8];
          #pragma unroll
          for (int ph_v = 0; ph_v < 8; ++ph_v) {
            ph_t[ph_v] = ph_src[ph_v];
          }
          ph_chunk = *reinterpret_cast<const uint4*>(ph_t);
        }
      }
      *reinterpret_cast<uint4*>(&r_a[(r4) * 40 + ((c5) * 8)]) = ph_chunk;
    }
    __syncthreads();
    for (int e6 = tid; e6 < 256; e6 += 128) {
      const int r7 = e6 / 8, c8 = e6 % 8;
      (void)r7;
      (void)c8;
      uint4 ph_chunk;
      {
        const __half* ph_src = &B[((r_kt + r7)) * d_N + (((int)blockIdx.y * 64) + (c8) * 8)];
        if ((reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
          ph_chunk = *reinterpret_cast<const uint4*>(ph_src);
        } else {
          __align__(16) __half ph_t[8];
          #pragma unroll
          for (int ph_v = 0; ph_v < 8; ++ph_v) {
            ph_t[ph_v] = ph_src[ph_v];
          }
          ph_chunk = *reinterpret_cast<const uint4*>(ph_t);
        }
      }
      *reinterpret_cast<uint4*>(&r_b[(r7) * 72 + ((c8) * 8)]) = ph_chunk;
    }
    __syncthreads();
    #pragma unroll
    for (int kk9 = 0; kk9 < 32; kk9 += 16) {
      const int lane = tid % 32;
      tc::tile::FragA16x16 fa[2];
      tc::tile::FragB16x8 fb[4];
      #pragma unroll
      for (int mi = 0; mi < 2; ++mi)
        tc::tile::ldmatrix_x4(fa[mi].r, &r_a[((tid / 32 / 2) * 32 + mi * 16 + ph_lda_row(lane)) * 40 + kk9 + ph_lda_col(lane)]);
      #pragma unroll
      for (int nj = 0; nj + 1 < 4; nj += 2) {
        tc::tile::u32 t4[4];
        ph_ldmatrix_x4_trans(t4, &r_b[(kk9 + ph_ldb_row(lane)) * 72 + (tid / 32 % 2) * 32 + nj * 8 + ph_ldb_col(lane)]);
        fb[nj].r[0] = t4[0]; fb[nj].r[1] = t4[1]; fb[nj + 1].r[0] = t4[2]; fb[nj + 1].r[1] = t4[3];
      }
      #pragma unroll
      for (int mi = 0; mi < 2; ++mi)
      #pragma unroll
        for (int nj = 0; nj < 4; ++nj) {
        tc::tile::FragC16x8 fc = {{r_acc[(mi * 4 + nj) * 4 + 0], r_acc[(mi * 4 + nj) * 4 + 1], r_acc[(mi * 4 + nj) * 4 + 2], r_acc[(mi * 4 + nj) * 4 + 3]}};
        tc::tile::mma_16816<tc::tile::f16>(fc, fa[mi], fb[nj]);
        r_acc[(mi * 4 + nj) * 4 + 0] = fc.r[0]; r_acc[(mi * 4 + nj) * 4 + 1] = fc.r[1]; r_acc[(mi * 4 + nj) * 4 + 2] = fc.r[2]; r_acc[(mi * 4 + nj) * 4 + 3] = fc.r[3];
      }
    }
  }
  #pragma unroll
  for (int i10 = 0; i10 < 32; ++i10) {
    const int r11 = (tid / 32 / 2) * 32 + (i10 / 16) * 16 + ph_c_row(tid % 32, i10 % 4);
    const int c12 = (tid / 32 % 2) * 32 + ((i10 / 4) % 4) * 8 + ph_c_col(tid % 32, i10 % 4);
    (void)r11;
    (void)c12;
    ph_st(&C[((((int)blockIdx.x * 64) + r11)) * d_N + (((int)blockIdx.y * 64) + c12)], r_acc[i10]);
  }
}
