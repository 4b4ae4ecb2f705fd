#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef unsigned int ph_u32;
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
static __device__ __forceinline__ ph_u32 ph_pack(__half lo, __half hi) {
  return (ph_u32)__half_as_ushort(lo) | ((ph_u32)__half_as_ushort(hi) << 16);
}
static __device__ __forceinline__ ph_u32 ph_pack(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return (ph_u32)__bfloat16_as_ushort(lo) | ((ph_u32)__bfloat16_as_ushort(hi) << 16);
}
// D = A(16x16, row) * B(16x8, col) + D, f32 accumulators; a[4], b[2] packed pairs.
static __device__ __forceinline__ void ph_mma(float* d, const ph_u32* a, const ph_u32* b, __half) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
static __device__ __forceinline__ void ph_mma(float* d, const ph_u32* a, const ph_u32* b, __nv_bfloat16) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
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
      for (int e3 = tid; e3 < 512; e3 += 128) {
        const int r4 = e3 / 8, c5 = e3 % 8;
        (void)r4;
        (void)c5;
        r_a[0 * 512 + e3] = (float)(((unsigned)(((int)blockIdx.x * 64) + r4) < (unsigned)d_M && (unsigned)((0) + c5) < (unsigned)d_K ? ph_ld(A[((((int)blockIdx.x * 64) + r4)) * d_K + ((0) + c5)]) : 0.0f));
      }
      for (int e6 = tid; e6 < 256; e6 += 128) {
        const int r7 = e6 / 32, c8 = e6 % 32;
        (void)r7;
        (void)c8;
        r_b[0 * 256 + e6] = (float)(((unsigned)((0) + r7) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + c8) < (unsigned)d_N ? ph_ld(B[(((0) + r7)) * d_N + (((int)blockIdx.y * 32) + c8)]) : 0.0f));
      }
    }
    __syncthreads();
    for (int r_kt = 0; r_kt < d_K; r_kt += 8) {
      const int ph_next = r_kt + 8;
      const bool ph_more = ph_next < d_K;
      float pf9[4];
      if (ph_more) {
        #pragma unroll
        for (int j10 = 0; j10 < 4; ++j10) {
          const int e11 = tid + j10 * 128;
          const int r_ = e11 / 8, c_ = e11 % 8;
          pf9[j10] = e11 < 512 ? ((unsigned)(((int)blockIdx.x * 64) + r_) < (unsigned)d_M && (unsigned)(ph_next + c_) < (unsigned)d_K ? ph_ld(A[((((int)blockIdx.x * 64) + r_)) * d_K + (ph_next + c_)]) : 0.0f) : 0;
        }
      }
      float pf12[2];
      if (ph_more) {
        #pragma unroll
        for (int j13 = 0; j13 < 2; ++j13) {
          const int e14 = tid + j13 * 128;
          const int r_ = e14 / 32, c_ = e14 % 32;
          pf12[j13] = e14 < 256 ? ((unsigned)(ph_next + r_) < (unsigned)d_K && (unsigned)(((int)blockIdx.y * 32) + c_) < (unsigned)d_N ? ph_ld(B[((ph_next + r_)) * d_N + (((int)blockIdx.y * 32) + c_)]) : 0.0f) : 0;
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
        for (int j = 0; j < 4; ++j) if (tid + j * 128 < 512) r_a[(ph_stage ^ 1) * 512 + tid + j * 128] = (float)(pf9[j]);
        #pragma unroll
        for (int j = 0; j < 2; ++j) if (tid + j * 128 < 256) r_b[(ph_stage ^ 1) * 256 + tid + j * 128] = (float)(pf12[j]);
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
