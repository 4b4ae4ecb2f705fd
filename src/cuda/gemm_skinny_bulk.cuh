// What the two decode kernels share (gemm_skinny.cu: B through registers, the planner and the
// launcher; gemm_skinny_bulk.cu: B through a shared-memory ring of bulk copies): the kernel
// arguments, the epilogue store, the L2 bulk prefetch, and the ring kernel's host entry points.
#pragma once

#include <cuda_runtime.h>

#include "cuda/gemm_kernels.h"
#include "cuda/tile/types.cuh"

namespace tc::cuda::skinny {

using tile::i32;
using tile::i64;
using tile::u32;

struct Args {
  const void* a;
  const void* b;
  void* c;
  i32 M, N, K;
  i64 lda, ldb, ldc;
  float alpha, beta;
  i32 c_type;    // 0 f32, 1 f16, 2 bf16
  i32 prefetch;  // register kernel: TC_SKINNY_PREFETCH=1; ring kernel: its first stages (default)
};

Args make_args(const GemmProblem& p, const GemmPlan& plan);

// C[m, n] = alpha * s + beta * C[m, n] (C is not read when beta = 0: it may hold NaN).
__device__ __forceinline__ void store_c(const Args& a, i32 m, i32 n, float s) {
  s *= a.alpha;
  const i64 off = i64(m) * a.ldc + n;
  if (a.c_type == 0) {
    float* c = static_cast<float*>(a.c) + off;
    *c = a.beta != 0.0f ? s + a.beta * *c : s;
  } else if (a.c_type == 1) {
    tile::f16* c = static_cast<tile::f16*>(a.c) + off;
    *c = tile::from_f32<tile::f16>(a.beta != 0.0f ? s + a.beta * tile::to_f32(*c) : s);
  } else {
    tile::bf16* c = static_cast<tile::bf16*>(a.c) + off;
    *c = tile::from_f32<tile::bf16>(a.beta != 0.0f ? s + a.beta * tile::to_f32(*c) : s);
  }
}

// Asks the TMA unit to bring `bytes` (a multiple of 16, p 16-byte aligned) into L2. A hint:
// safe before grid_dep_wait even when the previous kernel writes that memory, since L2 is the
// point of coherence and the real loads come after the wait. A no-op before sm_90 (the
// register kernel also runs on sm_80).
__device__ __forceinline__ void prefetch_l2(const void* p, u32 bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

// The ring kernel (sm_90+): plan->stages = ring stages (> 0 marks the ring kernel),
// plan->grid = CTAs (one per SM at most: the next PDL grid's CTAs fit beside them).
bool plan_skinny_bulk(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan);
tc_status_t launch_skinny_bulk(const GemmProblem& p, const GemmPlan& plan);

}  // namespace tc::cuda::skinny
