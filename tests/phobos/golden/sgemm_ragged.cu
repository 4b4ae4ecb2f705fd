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

// sgemm_ragged: 128 threads, 12288 bytes of shared memory
extern "C" __global__ void __launch_bounds__(128) phobos_sgemm_ragged_TILE_M64_TILE_N32_TILE_K8_T128(float* __restrict__ A, float* __restrict__ B, float* __restrict__ C, float alpha, float beta, int d_M, int d_K, int d_N) {
  const int tid = (int)threadIdx.x;
  (void)tid;
  extern __shared__ __align__(16) unsigned char ph_smem[];
  float* r_a = reinterpret_cast<float*>(ph_smem + 0);  // tile<f32>[64, 8] x 4 stages
  float* r_b = reinterpret_cast<float*>(ph_smem + 8192);  // tile<f32>[8, 32] x 4 stages
  float r_acc[16];
  float r_c_old[16];
  #pragma unroll
  for (int i0 = 0; i0 < 16; ++i0) {
    const int r1 = tid / 8 + (i0 / 4) * 16;
    const int c2 = (tid % 8) * 4 + (i0 % 4) % 4 + ((i0 % 4) / 4) * 32;
    (void)r1;
    (void)c2;
    r_acc[i0] = 0.0f;
  }
  {
    #pragma unroll
    for (int ph_s = 0; ph_s < 3; ++ph_s) {
      const int ph_kt = 0 + ph_s * 8;
      if (ph_kt < d_K) {
        #pragma unroll
        for (int j3 = 0; j3 < 1; ++j3) {
          const int e_ = tid + j3 * 128;
          const int r_ = e_ / 2, c_ = (e_ % 2) * 4;
          const float* ph_src = &A[((((int)blockIdx.x * 64) + r_)) * d_K + (ph_kt + c_)];
          float* ph_dst = &r_a[ph_s * 512 + (r_) * 8 + (c_)];
          if ((unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_kt + c_) < (unsigned)d_K && (unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_kt + (c_ + 3)) < (unsigned)d_K && (reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
            ph_cp_async16(ph_dst, ph_src);
          } else {
            #pragma unroll
            for (int ph_v = 0; ph_v < 4; ++ph_v)
              ph_dst[ph_v] = ((unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_kt + (c_ + ph_v)) < (unsigned)d_K) ? ph_src[ph_v] : (float)(0.0f);
          }
        }
        #pragma unroll
        for (int j4 = 0; j4 < 1; ++j4) {
          const int e_ = tid + j4 * 128;
          if (e_ >= 64) break;
          const int r_ = e_ / 8, c_ = (e_ % 8) * 4;
          const float* ph_src = &B[((ph_kt + r_)) * d_N + (((int)blockIdx.y * 32) + c_)];
          float* ph_dst = &r_b[ph_s * 256 + (r_) * 32 + (c_)];
          if ((unsigned)(ph_kt + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + c_) < (unsigned)d_N && (unsigned)(ph_kt + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + (c_ + 3)) < (unsigned)d_N && (reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
            ph_cp_async16(ph_dst, ph_src);
          } else {
            #pragma unroll
            for (int ph_v = 0; ph_v < 4; ++ph_v)
              ph_dst[ph_v] = ((unsigned)(ph_kt + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + (c_ + ph_v)) < (unsigned)d_N) ? ph_src[ph_v] : (float)(0.0f);
          }
        }
      }
      ph_cp_async_commit();
    }
    int ph_stage = 0;
    for (int r_kt = 0; r_kt < d_K; r_kt += 8) {
      ph_cp_async_wait<2>();
      __syncthreads();
      {
        const int ph_kt = r_kt + 3 * 8;
        const int ph_w = (ph_stage + 3) % 4;
        if (ph_kt < d_K) {
          #pragma unroll
          for (int j5 = 0; j5 < 1; ++j5) {
            const int e_ = tid + j5 * 128;
            const int r_ = e_ / 2, c_ = (e_ % 2) * 4;
            const float* ph_src = &A[((((int)blockIdx.x * 64) + r_)) * d_K + (ph_kt + c_)];
            float* ph_dst = &r_a[ph_w * 512 + (r_) * 8 + (c_)];
            if ((unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_kt + c_) < (unsigned)d_K && (unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_kt + (c_ + 3)) < (unsigned)d_K && (reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
              ph_cp_async16(ph_dst, ph_src);
            } else {
              #pragma unroll
              for (int ph_v = 0; ph_v < 4; ++ph_v)
                ph_dst[ph_v] = ((unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_kt + (c_ + ph_v)) < (unsigned)d_K) ? ph_src[ph_v] : (float)(0.0f);
            }
          }
          #pragma unroll
          for (int j6 = 0; j6 < 1; ++j6) {
            const int e_ = tid + j6 * 128;
            if (e_ >= 64) break;
            const int r_ = e_ / 8, c_ = (e_ % 8) * 4;
            const float* ph_src = &B[((ph_kt + r_)) * d_N + (((int)blockIdx.y * 32) + c_)];
            float* ph_dst = &r_b[ph_w * 256 + (r_) * 32 + (c_)];
            if ((unsigned)(ph_kt + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + c_) < (unsigned)d_N && (unsigned)(ph_kt + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + (c_ + 3)) < (unsigned)d_N && (reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
              ph_cp_async16(ph_dst, ph_src);
            } else {
              #pragma unroll
              for (int ph_v = 0; ph_v < 4; ++ph_v)
                ph_dst[ph_v] = ((unsigned)(ph_kt + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + (c_ + ph_v)) < (unsigned)d_N) ? ph_src[ph_v] : (float)(0.0f);
            }
          }
        }
        ph_cp_async_commit();
      }
      #pragma unroll 2
      for (int q7 = 0; q7 < 8; q7 += 4) {
        float4 av[4];
        #pragma unroll
        for (int ii = 0; ii < 4; ++ii) av[ii] = *reinterpret_cast<const float4*>(&(r_a + ph_stage * 512)[(tid / 8 + ii * 16) * 8 + q7]);
        #pragma unroll
        for (int u = 0; u < 4; ++u) {
          float bv[4];
          #pragma unroll
          for (int g = 0; g < 1; ++g) {
            const float4 t = *reinterpret_cast<const float4*>(&(r_b + ph_stage * 256)[(q7 + u) * 32 + (tid % 8) * 4 + g * 32]);
            bv[g * 4] = t.x; bv[g * 4 + 1] = t.y; bv[g * 4 + 2] = t.z; bv[g * 4 + 3] = t.w;
          }
          #pragma unroll
          for (int ii = 0; ii < 4; ++ii) {
            const float a = ph_f4(av[ii], u);
            #pragma unroll
            for (int jj = 0; jj < 4; ++jj) r_acc[ii * 4 + jj] += a * bv[jj];
          }
        }
      }
      ph_stage = (ph_stage + 1) % 4;
    }
    ph_cp_async_wait<0>();
  }
  #pragma unroll
  for (int i8 = 0; i8 < 16; ++i8) {
    const int r9 = tid / 8 + (i8 / 4) * 16;
    const int c10 = (tid % 8) * 4 + (i8 % 4) % 4 + ((i8 % 4) / 4) * 32;
    (void)r9;
    (void)c10;
    r_c_old[i8] = ((unsigned)(((int)blockIdx.x * 64) + r9) < (unsigned)d_M && (unsigned)(((int)blockIdx.y * 32) + c10) < (unsigned)d_N ? ph_ld(C[((((int)blockIdx.x * 64) + r9)) * d_N + (((int)blockIdx.y * 32) + c10)]) : 0.0f);
  }
  #pragma unroll
  for (int i11 = 0; i11 < 16; ++i11) {
    const int r12 = tid / 8 + (i11 / 4) * 16;
    const int c13 = (tid % 8) * 4 + (i11 % 4) % 4 + ((i11 % 4) / 4) * 32;
    (void)r12;
    (void)c13;
    if ((unsigned)(((int)blockIdx.x * 64) + r12) < (unsigned)d_M && (unsigned)(((int)blockIdx.y * 32) + c13) < (unsigned)d_N) ph_st(&C[((((int)blockIdx.x * 64) + r12)) * d_N + (((int)blockIdx.y * 32) + c13)], ((alpha * r_acc[i11]) + (beta * r_c_old[i11])));
  }
}
