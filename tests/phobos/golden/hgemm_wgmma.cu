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
#include "wgmma.cuh"
#include "tma.cuh"

// hgemm_big: 256 threads, 197696 bytes of shared memory
extern "C" __global__ void __launch_bounds__(384, 1) phobos_hgemm_big_BM128_BN256_BK64_T256(__half* __restrict__ A, __half* __restrict__ B, __half* __restrict__ C, int d_M, int d_K, int d_N, const __grid_constant__ tc::tile::TmaMap ph_map_r_a, const __grid_constant__ tc::tile::TmaMap ph_map_r_b) {
  const int tid = (int)threadIdx.x;
  (void)tid;
  extern __shared__ __align__(16) unsigned char ph_smem_raw[];
  unsigned char* ph_smem = ph_smem_raw + ((1024u - (tc::tile::smem_addr(ph_smem_raw) & 1023u)) & 1023u);
  __half* r_a = reinterpret_cast<__half*>(ph_smem + 0);  // tile<f16>[128, 64] x 4 stages
  __half* r_b = reinterpret_cast<__half*>(ph_smem + 65536);  // tile<f16>[64, 256] x 4 stages
  tc::tile::mbarrier* ph_full = reinterpret_cast<tc::tile::mbarrier*>(ph_smem + 196608);
  tc::tile::mbarrier* ph_empty = ph_full + 4;
  const int ph_gx = ph_cdiv(d_M, 128);
  const int ph_gy = ph_cdiv(d_N, 256);
  const int ph_gz = 1;
  const int ph_tiles = ph_gx * ph_gy * ph_gz;
  if (tid == 0) {
    tc::tile::tma_prefetch_map(&ph_map_r_a);
    tc::tile::tma_prefetch_map(&ph_map_r_b);
    for (int s = 0; s < 4; ++s) {
      tc::tile::mbar_init(&ph_full[s], 1);
      tc::tile::mbar_init(&ph_empty[s], 8);  // lane 0 of each consumer warp
    }
    tc::tile::mbar_fence_init();
  }
  __syncthreads();
  if (tid >= 256) {  // the producer warpgroup
    tc::tile::warpgroup_reg_dealloc<40>();
    if (tid == 256) {
      int ph_ps = 0;
      unsigned ph_pp = 0;
      for (int ph_t = blockIdx.x; ph_t < ph_tiles; ph_t += gridDim.x) {
        const int ph_bx = ph_t % ph_gx, ph_by = ph_t / ph_gx % ph_gy, ph_bz = ph_t / (ph_gx * ph_gy);
        (void)ph_bx;
        (void)ph_by;
        (void)ph_bz;
        for (int r_kt = 0; r_kt < d_K; r_kt += 64) {
          tc::tile::mbar_wait(&ph_empty[ph_ps], ph_pp ^ 1u);
          tc::tile::mbar_arrive_expect_tx(&ph_full[ph_ps], 49152u);
          tc::tile::tma_load_3d(r_a + ph_ps * 8192, &ph_map_r_a, &ph_full[ph_ps], r_kt, (ph_bx * 128), 0);
          tc::tile::tma_load_3d(r_b + ph_ps * 16384 + 0, &ph_map_r_b, &ph_full[ph_ps], (ph_by * 256) + 0, r_kt, 0);
          tc::tile::tma_load_3d(r_b + ph_ps * 16384 + 4096, &ph_map_r_b, &ph_full[ph_ps], (ph_by * 256) + 64, r_kt, 0);
          tc::tile::tma_load_3d(r_b + ph_ps * 16384 + 8192, &ph_map_r_b, &ph_full[ph_ps], (ph_by * 256) + 128, r_kt, 0);
          tc::tile::tma_load_3d(r_b + ph_ps * 16384 + 12288, &ph_map_r_b, &ph_full[ph_ps], (ph_by * 256) + 192, r_kt, 0);
          if (++ph_ps == 4) {
            ph_ps = 0;
            ph_pp ^= 1u;
          }
        }
      }
    }
    return;
  }
  tc::tile::warpgroup_reg_alloc<232>();
  float r_acc[128];
  int ph_stage = 0, ph_prev = -1;
  unsigned ph_phase = 0;
  for (int ph_t = blockIdx.x; ph_t < ph_tiles; ph_t += gridDim.x) {
    const int ph_bx = ph_t % ph_gx, ph_by = ph_t / ph_gx % ph_gy, ph_bz = ph_t / (ph_gx * ph_gy);
    (void)ph_bx;
    (void)ph_by;
    (void)ph_bz;
    #pragma unroll
    for (int i0 = 0; i0 < 128; ++i0) {
      const int r1 = ph_wg_row(tid, i0);
      const int c2 = ph_wg_col(tid, i0);
      (void)r1;
      (void)c2;
      r_acc[i0] = 0.0f;
    }
    for (int r_kt = 0; r_kt < d_K; r_kt += 64) {
      tc::tile::mbar_wait(&ph_full[ph_stage], ph_phase);
      {
        const tc::tile::u32 ph_sa = tc::tile::smem_addr((r_a + ph_stage * 8192)) + (tid / 128) * 8192;
        const tc::tile::u32 ph_sb = tc::tile::smem_addr((r_b + ph_stage * 16384));
        tc::tile::wgmma_fence();
        #pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const tc::tile::u64 da = tc::tile::make_smem_desc_sw128(ph_sa + kk * 32, 16, 1024);
          const tc::tile::u64 db = tc::tile::make_smem_desc_sw128(ph_sb + kk * 2048, 8192, 1024);
          tc::tile::Wgmma16<256, tc::tile::f16, 0, 1>::run(r_acc, da, db, 1u);
        }
        tc::tile::wgmma_commit();
        tc::tile::wgmma_wait<1>();
      }
      if (ph_prev >= 0 && (tid & 31) == 0) tc::tile::mbar_arrive(&ph_empty[ph_prev]);
      ph_prev = ph_stage;
      if (++ph_stage == 4) {
        ph_stage = 0;
        ph_phase ^= 1u;
      }
    }
    tc::tile::wgmma_wait<0>();
    if (ph_prev >= 0 && (tid & 31) == 0) tc::tile::mbar_arrive(&ph_empty[ph_prev]);
    ph_prev = -1;
    #pragma unroll
    for (int i3 = 0; i3 < 128; i3 += 2) {
      const int r4 = ph_wg_row(tid, i3);
      const int c5 = ph_wg_col(tid, i3);
      const float ph_v0 = r_acc[i3];
      const float ph_v1 = r_acc[(i3 + 1)];
      const int ph_row = ((ph_bx * 128) + r4), ph_col = ((ph_by * 256) + c5);
      const long long ph_o = (long long)ph_row * d_N + ph_col;
      if ((ph_o & 1) == 0) {
        *reinterpret_cast<__half2*>(&C[ph_o]) = __floats2half2_rn(ph_v0, ph_v1);
      } else {
        ph_st(&C[ph_o], ph_v0);
        ph_st(&C[ph_o + 1], ph_v1);
      }
    }
  }
}
