// The device-side helpers every generated kernel starts with. NVRTC-compatible: no standard
// library headers. Tensor-core code uses the shared tile library (src/cuda/tile/mma.cuh:
// fragments, mma_16816, ldmatrix) and Phobos's fragment maps (mma_map.inc), both embedded into
// the library and handed to NVRTC as in-memory headers (headers.cpp).
#include <string>

namespace phobos {

const char* cuda_prelude() {
  return R"PHOBOS(#include <cuda_fp16.h>
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
)PHOBOS";
}

}  // namespace phobos
