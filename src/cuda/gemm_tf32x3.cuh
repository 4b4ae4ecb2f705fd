// f32 GEMM at f32 accuracy on the tensor cores (sm_90a): 3xTF32. Every input x is split into
// hi = tf32(x) and lo = tf32(x - hi), so x = hi + lo to about 2^-22 relative, and
// A B ~ Ahi Bhi + Ahi Blo + Alo Bhi (the dropped Alo Blo is ~2^-22 of each product).
//
// Contract:
//  - A pre-pass (split_tf32_kernel) writes both operands K-major into the workspace, one row per
//    M (or N) index holding hi[0..kp) then lo[0..kp), kp = K rounded up to 32 (zeros past K).
//    wgmma tf32 reads only K-major operands, so this pass also serves every transpose, ld and
//    alignment. Workspace: (M + N) x 2 kp x 4 bytes.
//  - The kernel is gemm_wgmma_kernel's structure (hopper.md section 5): 384 threads, a TMA
//    producer warpgroup and two consumers of 64 rows each, 128 x 128 tiles, BK = 32 (one
//    128-byte swizzle atom), 3 stages of 64 KB (A hi, A lo, B hi, B lo), persistent tiles.
//  - Accuracy: the tensor cores' f32 accumulation is not a round-to-nearest running sum. With
//    chunks of 4 k-blocks (48 wgmma accumulations) the H200 lab measured 8.5-9.3e-7 rms for
//    every K from 301 to 8192, i.e. the error is set by the chunk length, not by K. So the
//    tensor cores sum chunks of CHUNK k-blocks (default 1: 12 accumulations) and each chunk is
//    added to an f32 total in registers with FADD (round to nearest).
//  - Epilogue: gemm_wgmma's (TMA stores when beta == 0 and C is TMA-legal; else direct).
//  - PASSES = 1 is the own 1-pass TF32 kernel (accum_dtype TF32; gemm_tf32.h): one operand
//    box per stage (A, B), 6 stages, the tensor cores summing the whole K range (its error is
//    set by the tf32 inputs, ~1e-3, not by the accumulation), operands read by TMA straight
//    from the caller's f32 matrices when K-major and TMA-legal, else from a K-major copy
//    (split_tf32_kernel<1>: the raw f32 bits, so both ways give the same bits). wgmma reads
//    the f32 containers as tf32 (the low 13 mantissa bits ignored: truncation).
// Included by gemm_tf32x3.cu only (the split kernel has internal linkage).
#pragma once

#include "cuda/gemm_wgmma_epilogue.cuh"

namespace tc::cuda {

template <int PASSES>
struct Tf32Smem {
  static constexpr int stages = PASSES == 3 ? 3 : 6;
  static constexpr int parts = PASSES == 3 ? 2 : 1;    // boxes per operand: hi, lo / the value
  static constexpr int box = 128 * 128;                // one 128-row x 128-byte operand box
  static constexpr int stage_bytes = 2 * parts * box;  // A (hi, lo), B (hi, lo)
  static constexpr int epi_offset = stages * stage_bytes;
  static constexpr int bar_offset = epi_offset + 2 * kWgmmaEpiBytes;
  static constexpr int total = 1024 + bar_offset + 2 * stages * 8;
  static_assert(total <= 232448, "over the 227 KB opt-in limit");
};

__device__ __forceinline__ float tf32_round(float x) {
  u32 r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

// Element (r, k) of the source is src[r * sr + k * sk]; one of sr, sk is 1. 32 x 32 tiles
// through shared memory keep both the read and the (K-major) write coalesced. PASSES 3: rows of
// hi then lo (2 kp); PASSES 1: rows of the raw values (kp).
template <int PASSES>
static __global__ void split_tf32_kernel(const float* __restrict__ src, float* __restrict__ dst,
                                         int rows, int K, long long sr, long long sk, int kp) {
  __shared__ float tile[32][33];
  const int r0 = blockIdx.y * 32, k0 = blockIdx.x * 32;
  const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
  if (sk == 1) {
    for (int j = ty; j < 32; j += 8) {
      const int r = r0 + j, k = k0 + tx;
      tile[j][tx] = r < rows && k < K ? src[r * sr + k] : 0.0f;
    }
  } else {
    for (int j = ty; j < 32; j += 8) {
      const int r = r0 + tx, k = k0 + j;
      tile[tx][j] = r < rows && k < K ? src[k * sk + r] : 0.0f;
    }
  }
  __syncthreads();
  for (int j = ty; j < 32; j += 8) {
    const int r = r0 + j, k = k0 + tx;
    if (r >= rows) continue;
    const float x = tile[j][tx];
    if constexpr (PASSES == 1) {
      dst[(long long)r * kp + k] = x;
    } else {
      const float hi = tf32_round(x);
      float* d = dst + (long long)r * 2 * kp;
      d[k] = hi;
      d[kp + k] = tf32_round(x - hi);
    }
  }
}

// D(64x128, f32) (+)= A(64x8, tf32, registers) * B(8x128, tf32, K-major shared memory): the
// register form lets an MN-major operand serve as A (PTX ISA: wgmma tf32 reads shared memory
// K-major only). The fragment's registers must not change until the wgmma has completed.
// clang-format off
__device__ __forceinline__ void wgmma_tf32_rs(float (&d)[64], const u32 (&a)[4], u64 db,
                                              u32 accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
}
// clang-format on

// The A fragment of k8 step kk (a0: row g, k t; a1: row g + 8; a2, a3: k + 4; g = lane / 4,
// t = lane % 4; rows 16 w.. of the warpgroup's 64) from a 64-row x 32-k MN-major tile: two
// TMA boxes of 32 k rows x 32 elements (128 bytes, 128-byte swizzle: the 16-byte chunk index
// XOR the row's index mod 8), `tile` their shared-memory address.
__device__ __forceinline__ void load_a_frag_mn(u32 (&a)[4], u32 tile, int kk) {
  const int l = threadIdx.x % 32, w = (threadIdx.x / 32) % 4;
  const u32 box = tile + (w / 2) * 4096;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = 16 * (w % 2) + l / 4 + 8 * (i & 1), k = 8 * kk + l % 4 + 4 * (i >> 1);
    const u32 addr = box + k * 128 + (((row >> 2) ^ (k & 7)) << 4) + (row & 3) * 4;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(a[i]) : "r"(addr) : "memory");
  }
}

// CHUNK: k-blocks of 32 summed by the tensor cores before the f32 total (see the contract;
// PASSES 1 sums the whole range). kp: the k offset of the lo parts in the maps (PASSES 3).
// AREG (PASSES 1): map_a is an MN-major operand (boxes of 32 k x 32 rows), read into registers.
template <int PASSES, int CHUNK, bool AREG = false>
__global__ void __launch_bounds__(384, 1)
    gemm_tf32x3_kernel(const __grid_constant__ TmaMap map_a, const __grid_constant__ TmaMap map_b,
                       const __grid_constant__ TmaMap map_c, const WgmmaArgs args, const i32 kp) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Tf32Smem<PASSES>;
  constexpr int kStages = S::stages;
  extern __shared__ u8 smem_raw[];
  u8* smem = reinterpret_cast<u8*>((reinterpret_cast<u64>(smem_raw) + 1023) & ~u64(1023));
  mbarrier* full = reinterpret_cast<mbarrier*>(smem + S::bar_offset);
  mbarrier* empty = full + kStages;
  const int wg = threadIdx.x / 128;
  const i32 units = args.tiles_m * args.tiles_n;
  if (threadIdx.x == 0) {
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 8);  // lane 0 of each consumer warp
    }
    mbar_fence_init();
  }
  __syncthreads();
  grid_dep_wait();
  grid_dep_launch_dependents();

  if (wg == 0) {
    warpgroup_reg_dealloc<40>();
    if (threadIdx.x == 0) {
      int stage = 0;
      u32 phase = 0;
      for (i32 t = blockIdx.x; t < units; t += gridDim.x) {
        const WorkUnit u = decode_unit<128>(args, t);
        const i32 n0 = u.n0 * 128;
        for (i32 kb = u.kb0; kb < u.kb1; ++kb) {
          mbar_wait(&empty[stage], phase ^ 1);
          u8* s = smem + stage * S::stage_bytes;
          mbar_arrive_expect_tx(&full[stage], S::stage_bytes);
          const i32 k0 = kb * 32;
          if constexpr (AREG) {
            for (int j = 0; j < 4; ++j)
              tma_load_3d(s + j * 4096, &map_a, &full[stage], u.m0 + 32 * j, k0, 0);
          } else {
            tma_load_3d(s, &map_a, &full[stage], k0, u.m0, 0);
          }
          tma_load_3d(s + S::parts * S::box, &map_b, &full[stage], k0, n0, 0);
          if constexpr (PASSES == 3) {
            tma_load_3d(s + S::box, &map_a, &full[stage], kp + k0, u.m0, 0);
            tma_load_3d(s + 3 * S::box, &map_b, &full[stage], kp + k0, n0, 0);
          }
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    warpgroup_reg_alloc<232>();
    const int cw = wg - 1;
    u8* epi = smem + S::epi_offset + cw * kWgmmaEpiBytes;
    int stage = 0;
    u32 phase = 0;
    float d[64], tot[64];
    for (i32 t = blockIdx.x; t < units; t += gridDim.x) {
      WorkUnit u = decode_unit<128>(args, t);
      u.n0 *= 128;
#pragma unroll
      for (int i = 0; i < 64; ++i) tot[i] = 0.0f;
      const i32 chunk = PASSES == 1 ? max(1, u.kb1 - u.kb0) : CHUNK;
      for (i32 c0 = u.kb0; c0 < u.kb1; c0 += chunk) {
        const i32 c1 = min(u.kb1, c0 + chunk);
        int prev = -1;
        for (i32 kb = c0; kb < c1; ++kb) {
          mbar_wait(&full[stage], phase);
          const u32 s = smem_addr(smem + stage * S::stage_bytes) + cw * 8192;
          const u32 sb = smem_addr(smem + stage * S::stage_bytes) + S::parts * S::box;
          [[maybe_unused]] u32 a[4][4];  // AREG: the stage's A fragments, loaded before the fence
          if constexpr (AREG) {
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) load_a_frag_mn(a[kk], s, kk);
          }
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < 4; ++kk) {  // k8 steps: +32 bytes in the swizzled row
            if constexpr (AREG) {
              wgmma_tf32_rs(d, a[kk], make_smem_desc_sw128(sb + kk * 32, 16, 1024),
                            (kb > c0 || kk > 0) ? 1u : 0u);
            } else if constexpr (PASSES == 1) {
              WgmmaTf32x128::run(d, make_smem_desc_sw128(s + kk * 32, 16, 1024),
                                 make_smem_desc_sw128(sb + kk * 32, 16, 1024),
                                 (kb > c0 || kk > 0) ? 1u : 0u);
            } else {
              const u64 ahi = make_smem_desc_sw128(s + kk * 32, 16, 1024);
              const u64 alo = make_smem_desc_sw128(s + S::box + kk * 32, 16, 1024);
              const u64 bhi = make_smem_desc_sw128(sb + kk * 32, 16, 1024);
              const u64 blo = make_smem_desc_sw128(sb + S::box + kk * 32, 16, 1024);
              // Small terms first, while the chunk sum is small.
              WgmmaTf32x128::run(d, ahi, blo, (kb > c0 || kk > 0) ? 1u : 0u);
              WgmmaTf32x128::run(d, alo, bhi, 1u);
              WgmmaTf32x128::run(d, ahi, bhi, 1u);
            }
          }
          wgmma_commit();
          if constexpr (AREG) {
            // The in-flight wgmma reads the fragments' registers: wait for it, and keep them
            // live until then (the compiler would otherwise reuse them after the issue).
            wgmma_wait<0>();
            reg_fence(a[0]);
            reg_fence(a[1]);
            reg_fence(a[2]);
            reg_fence(a[3]);
            if (threadIdx.x % 32 == 0) mbar_arrive(&empty[stage]);
          } else {
            wgmma_wait<1>();
            if (prev >= 0 && threadIdx.x % 32 == 0) mbar_arrive(&empty[prev]);
            prev = stage;
          }
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
        wgmma_wait<0>();
        if (prev >= 0 && threadIdx.x % 32 == 0) mbar_arrive(&empty[prev]);
#pragma unroll
        for (int i = 0; i < 64; ++i) tot[i] += d[i];
      }
      const i32 row_base = u.m0 + 64 * cw;
      if (args.tma_store)
        store_tile_tma<float, 128>(args, &map_c, tot, u, row_base, epi, cw);
      else
        store_tile<float, 128>(args, tot, u, row_base);
    }
    if (args.tma_store && threadIdx.x % 128 == 0) bulk_wait<0>();
  }
#endif
}

}  // namespace tc::cuda
