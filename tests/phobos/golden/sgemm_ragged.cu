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

// sgemm_ragged: 128 threads, 6144 bytes of shared memory
extern "C" __global__ void __launch_bounds__(128) phobos_sgemm_ragged_TILE_M64_TILE_N32_TILE_K8_T128(float* __restrict__ A, float* __restrict__ B, float* __restrict__ C, float alpha, float beta, int d_M, int d_K, int d_N) {
  const int tid = (int)threadIdx.x;
  (void)tid;
  extern __shared__ __align__(16) unsigned char ph_smem[];
  float* r_a = reinterpret_cast<float*>(ph_smem + 0);  // tile<f32>[64, 8] x 2 stages
  float* r_b = reinterpret_cast<float*>(ph_smem + 4096);  // tile<f32>[8, 32] x 2 stages
  float r_acc[16];
  float r_c_old[16];
  #pragma unroll
  for (int i0 = 0; i0 < 16; ++i0) {
    const int r1 = tid / 8 + (i0 / 4) * 16;
    const int c2 = tid % 8 + (i0 % 4) * 8;
    (void)r1;
    (void)c2;
    r_acc[i0] = 0.0f;
  }
  {
    int ph_stage = 0;
    if (0 < d_K) {
      for (int e3 = tid; e3 < 128; e3 += 128) {
        const int r4 = e3 / 2, c5 = e3 % 2;
        (void)r4;
        (void)c5;
        uint4 ph_chunk;
        {
          const float* ph_src = &A[((((int)blockIdx.x * 64) + r4)) * d_K + ((0) + (c5) * 4)];
          if ((unsigned)(((int)blockIdx.x * 64) + r4) < (unsigned)d_M && (unsigned)((0) + (c5) * 4) < (unsigned)d_K && (unsigned)(((int)blockIdx.x * 64) + r4) < (unsigned)d_M && (unsigned)((0) + ((c5) * 4 + 3)) < (unsigned)d_K && (reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
            ph_chunk = *reinterpret_cast<const uint4*>(ph_src);
          } else {
            __align__(16) float ph_t[4];
            #pragma unroll
            for (int ph_v = 0; ph_v < 4; ++ph_v) {
              ph_t[ph_v] = ((unsigned)(((int)blockIdx.x * 64) + r4) < (unsigned)d_M && (unsigned)((0) + ((c5) * 4 + ph_v)) < (unsigned)d_K) ? ph_src[ph_v] : (float)(0.0f);
            }
            ph_chunk = *reinterpret_cast<const uint4*>(ph_t);
          }
        }
        *reinterpret_cast<uint4*>(&r_a[0 * 512 + (r4) * 8 + (c5) * 4]) = ph_chunk;
      }
      for (int e6 = tid; e6 < 64; e6 += 128) {
        const int r7 = e6 / 8, c8 = e6 % 8;
        (void)r7;
        (void)c8;
        uint4 ph_chunk;
        {
          const float* ph_src = &B[(((0) + r7)) * d_N + (((int)blockIdx.y * 32) + (c8) * 4)];
          if ((unsigned)((0) + r7) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + (c8) * 4) < (unsigned)d_N && (unsigned)((0) + r7) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + ((c8) * 4 + 3)) < (unsigned)d_N && (reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
            ph_chunk = *reinterpret_cast<const uint4*>(ph_src);
          } else {
            __align__(16) float ph_t[4];
            #pragma unroll
            for (int ph_v = 0; ph_v < 4; ++ph_v) {
              ph_t[ph_v] = ((unsigned)((0) + r7) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + ((c8) * 4 + ph_v)) < (unsigned)d_N) ? ph_src[ph_v] : (float)(0.0f);
            }
            ph_chunk = *reinterpret_cast<const uint4*>(ph_t);
          }
        }
        *reinterpret_cast<uint4*>(&r_b[0 * 256 + (r7) * 32 + (c8) * 4]) = ph_chunk;
      }
    }
    __syncthreads();
    for (int r_kt = 0; r_kt < d_K; r_kt += 8) {
      const int ph_next = r_kt + 8;
      const bool ph_more = ph_next < d_K;
      uint4 pf9[1];
      if (ph_more) {
        #pragma unroll
        for (int j10 = 0; j10 < 1; ++j10) {
          const int e11 = tid + j10 * 128;
          const int r_ = e11 / 2, c_ = (e11 % 2) * 4;
          if (e11 < 128)
          {
            const float* ph_src = &A[((((int)blockIdx.x * 64) + r_)) * d_K + (ph_next + c_)];
            if ((unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_next + c_) < (unsigned)d_K && (unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_next + (c_ + 3)) < (unsigned)d_K && (reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
              pf9[j10] = *reinterpret_cast<const uint4*>(ph_src);
            } else {
              __align__(16) float ph_t[4];
              #pragma unroll
              for (int ph_v = 0; ph_v < 4; ++ph_v) {
                ph_t[ph_v] = ((unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_next + (c_ + ph_v)) < (unsigned)d_K) ? ph_src[ph_v] : (float)(0.0f);
              }
              pf9[j10] = *reinterpret_cast<const uint4*>(ph_t);
            }
          }
        }
      }
      uint4 pf12[1];
      if (ph_more) {
        #pragma unroll
        for (int j13 = 0; j13 < 1; ++j13) {
          const int e14 = tid + j13 * 128;
          const int r_ = e14 / 8, c_ = (e14 % 8) * 4;
          if (e14 < 64)
          {
            const float* ph_src = &B[((ph_next + r_)) * d_N + (((int)blockIdx.y * 32) + c_)];
            if ((unsigned)(ph_next + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + c_) < (unsigned)d_N && (unsigned)(ph_next + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + (c_ + 3)) < (unsigned)d_N && (reinterpret_cast<unsigned long long>(ph_src) & 15) == 0) {
              pf12[j13] = *reinterpret_cast<const uint4*>(ph_src);
            } else {
              __align__(16) float ph_t[4];
              #pragma unroll
              for (int ph_v = 0; ph_v < 4; ++ph_v) {
                ph_t[ph_v] = ((unsigned)(ph_next + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + (c_ + ph_v)) < (unsigned)d_N) ? ph_src[ph_v] : (float)(0.0f);
              }
              pf12[j13] = *reinterpret_cast<const uint4*>(ph_t);
            }
          }
        }
      }
      #pragma unroll 4
      for (int q15 = 0; q15 < 8; ++q15) {
        float av[4], bv[4];
        #pragma unroll
        for (int ii = 0; ii < 4; ++ii) av[ii] = ph_ld((r_a + ph_stage * 512)[(tid / 8 + ii * 16) * 8 + q15]);
        #pragma unroll
        for (int jj = 0; jj < 4; ++jj) bv[jj] = ph_ld((r_b + ph_stage * 256)[(q15) * 32 + tid % 8 + jj * 8]);
        #pragma unroll
        for (int ii = 0; ii < 4; ++ii)
        #pragma unroll
          for (int jj = 0; jj < 4; ++jj) r_acc[ii * 4 + jj] += av[ii] * bv[jj];
      }
      if (ph_more) {
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          const int e_ = tid + j * 128, r_ = e_ / 2, c_ = (e_ % 2) * 4;
          (void)r_;
          if (e_ < 128) *reinterpret_cast<uint4*>(&r_a[(ph_stage ^ 1) * 512 + (r_) * 8 + c_]) = pf9[j];
        }
        #pragma unroll
        for (int j = 0; j < 1; ++j) {
          const int e_ = tid + j * 128, r_ = e_ / 8, c_ = (e_ % 8) * 4;
          (void)r_;
          if (e_ < 64) *reinterpret_cast<uint4*>(&r_b[(ph_stage ^ 1) * 256 + (r_) * 32 + c_]) = pf12[j];
        }
      }
      __syncthreads();
      ph_stage ^= 1;
    }
  }
  #pragma unroll
  for (int i16 = 0; i16 < 16; ++i16) {
    const int r17 = tid / 8 + (i16 / 4) * 16;
    const int c18 = tid % 8 + (i16 % 4) * 8;
    (void)r17;
    (void)c18;
    r_c_old[i16] = ((unsigned)(((int)blockIdx.x * 64) + r17) < (unsigned)d_M && (unsigned)(((int)blockIdx.y * 32) + c18) < (unsigned)d_N ? ph_ld(C[((((int)blockIdx.x * 64) + r17)) * d_N + (((int)blockIdx.y * 32) + c18)]) : 0.0f);
  }
  #pragma unroll
  for (int i19 = 0; i19 < 16; ++i19) {
    const int r20 = tid / 8 + (i19 / 4) * 16;
    const int c21 = tid % 8 + (i19 % 4) * 8;
    (void)r20;
    (void)c21;
    if ((unsigned)(((int)blockIdx.x * 64) + r20) < (unsigned)d_M && (unsigned)(((int)blockIdx.y * 32) + c21) < (unsigned)d_N) ph_st(&C[((((int)blockIdx.x * 64) + r20)) * d_N + (((int)blockIdx.y * 32) + c21)], ((alpha * r_acc[i19]) + (beta * r_c_old[i19])));
  }
}
