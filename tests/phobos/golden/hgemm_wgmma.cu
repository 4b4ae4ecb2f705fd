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
static __device__ __forceinline__ float ph_gelu(float x) {
  // tanh form (spec §3)
  return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
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
#include "wgmma.cuh"

// hgemm_big: 256 threads, 197632 bytes of shared memory
extern "C" __global__ void __launch_bounds__(256) phobos_hgemm_big_BM128_BN256_BK64_T256(__half* __restrict__ A, __half* __restrict__ B, __half* __restrict__ C, int d_M, int d_K, int d_N) {
  const int tid = (int)threadIdx.x;
  (void)tid;
  extern __shared__ __align__(16) unsigned char ph_smem_raw[];
  unsigned char* ph_smem = ph_smem_raw + ((1024u - (tc::tile::smem_addr(ph_smem_raw) & 1023u)) & 1023u);
  __half* r_a = reinterpret_cast<__half*>(ph_smem + 0);  // tile<f16>[128, 64] x 4 stages
  __half* r_b = reinterpret_cast<__half*>(ph_smem + 65536);  // tile<f16>[64, 256] x 4 stages
  float r_acc[128];
  #pragma unroll
  for (int i0 = 0; i0 < 128; ++i0) {
    const int r1 = ph_wg_row(tid, i0);
    const int c2 = ph_wg_col(tid, i0);
    (void)r1;
    (void)c2;
    r_acc[i0] = 0.0f;
  }
  {
    #pragma unroll
    for (int ph_s = 0; ph_s < 2; ++ph_s) {
      const int ph_kt = 0 + ph_s * 64;
      if (ph_kt < d_K) {
        #pragma unroll
        for (int j3 = 0; j3 < 4; ++j3) {
          const int e_ = tid + j3 * 256;
          const int r_ = e_ / 8, c_ = (e_ % 8) * 8;
          const __half* ph_src = &A[((((int)blockIdx.x * 128) + r_)) * d_K + (ph_kt + c_)];
          __half* ph_dst = &r_a[ph_s * 8192 + ph_sw128_k(r_, c_)];
          if ((reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
            ph_cp_async16(ph_dst, ph_src);
          } else {
            #pragma unroll
            for (int ph_v = 0; ph_v < 8; ++ph_v)
              ph_dst[ph_v] = ph_src[ph_v];
          }
        }
        #pragma unroll
        for (int j4 = 0; j4 < 8; ++j4) {
          const int e_ = tid + j4 * 256;
          const int r_ = e_ / 32, c_ = (e_ % 32) * 8;
          const __half* ph_src = &B[((ph_kt + r_)) * d_N + (((int)blockIdx.y * 256) + c_)];
          __half* ph_dst = &r_b[ph_s * 16384 + ph_sw128_n(r_, c_, 64)];
          if ((reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
            ph_cp_async16(ph_dst, ph_src);
          } else {
            #pragma unroll
            for (int ph_v = 0; ph_v < 8; ++ph_v)
              ph_dst[ph_v] = ph_src[ph_v];
          }
        }
      }
      ph_cp_async_commit();
    }
    int ph_stage = 0;
    for (int r_kt = 0; r_kt < d_K; r_kt += 64) {
      ph_cp_async_wait<1>();
      ph_fence_proxy_async();
      __syncthreads();
      {
        const int ph_kt = r_kt + 2 * 64;
        const int ph_w = (ph_stage + 2) % 4;
        if (ph_kt < d_K) {
          #pragma unroll
          for (int j5 = 0; j5 < 4; ++j5) {
            const int e_ = tid + j5 * 256;
            const int r_ = e_ / 8, c_ = (e_ % 8) * 8;
            const __half* ph_src = &A[((((int)blockIdx.x * 128) + r_)) * d_K + (ph_kt + c_)];
            __half* ph_dst = &r_a[ph_w * 8192 + ph_sw128_k(r_, c_)];
            if ((reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
              ph_cp_async16(ph_dst, ph_src);
            } else {
              #pragma unroll
              for (int ph_v = 0; ph_v < 8; ++ph_v)
                ph_dst[ph_v] = ph_src[ph_v];
            }
          }
          #pragma unroll
          for (int j6 = 0; j6 < 8; ++j6) {
            const int e_ = tid + j6 * 256;
            const int r_ = e_ / 32, c_ = (e_ % 32) * 8;
            const __half* ph_src = &B[((ph_kt + r_)) * d_N + (((int)blockIdx.y * 256) + c_)];
            __half* ph_dst = &r_b[ph_w * 16384 + ph_sw128_n(r_, c_, 64)];
            if ((reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
              ph_cp_async16(ph_dst, ph_src);
            } else {
              #pragma unroll
              for (int ph_v = 0; ph_v < 8; ++ph_v)
                ph_dst[ph_v] = ph_src[ph_v];
            }
          }
        }
        ph_cp_async_commit();
      }
      {
        const tc::tile::u32 ph_sa = tc::tile::smem_addr((r_a + ph_stage * 8192)) + (tid / 128) * 8192;
        const tc::tile::u32 ph_sb = tc::tile::smem_addr((r_b + ph_stage * 16384));
        tc::tile::reg_fence(r_acc);
        tc::tile::wgmma_fence();
        #pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const tc::tile::u64 da = tc::tile::make_smem_desc_sw128(ph_sa + kk * 32, 16, 1024);
          const tc::tile::u64 db = tc::tile::make_smem_desc_sw128(ph_sb + kk * 2048, 8192, 1024);
          tc::tile::Wgmma16<256, tc::tile::f16, 0, 1>::run(r_acc, da, db, 1u);
        }
        tc::tile::wgmma_commit();
        tc::tile::wgmma_wait<1>();
        tc::tile::reg_fence(r_acc);
      }
      ph_stage = (ph_stage + 1) % 4;
    }
    tc::tile::wgmma_wait<0>();
    tc::tile::reg_fence(r_acc);
    ph_cp_async_wait<0>();
  }
  #pragma unroll
  for (int i7 = 0; i7 < 128; ++i7) {
    const int r8 = ph_wg_row(tid, i7);
    const int c9 = ph_wg_col(tid, i7);
    (void)r8;
    (void)c9;
    ph_st(&C[((((int)blockIdx.x * 128) + r8)) * d_N + (((int)blockIdx.y * 256) + c9)], r_acc[i7]);
  }
}
