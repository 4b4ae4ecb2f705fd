// The sm_90a GEMM kernel: C = alpha * op(A) op(B) + beta * C, row-major, f32/s32 accumulators.
//
// Contract (hopper.md sections 1-5):
//  - CTA = 384 threads: warpgroup 0 produces (one thread issues TMA, setmaxnreg 40), warpgroups
//    1-2 consume (setmaxnreg 232), each owning 64 rows of the BM = 128 x BN tile.
//  - K step per stage: 128 bytes of K (BK = 64 for 16-bit types, 128 for s8), which is exactly
//    one 128B-swizzle atom wide, so every operand box is 128 bytes on its inner dimension.
//  - Shared memory per stage: A 128 x 128 B = 16 KB, B BN x 128 B (32 KB at BN = 256);
//    STAGES stages, 1024-byte aligned, then the full/empty mbarriers.
//  - A K-major (row-major M x K): one box {BK, 128}. A M-major (transpose_a, K x M): two boxes
//    {64 m, 64 k}, one per consumer. B K-major (transpose_b, N x K): one box {BK, BN}.
//    B N-major (K x N): BN/64 boxes {64 n, 64 k}, 8 KB apart (that is the descriptor's LBO).
//  - Persistent: grid = min(work units, SMs); a unit is (batch, split, tile), tiles grouped
//    GROUP_M rows deep along M so that concurrently running CTAs share A and B in L2.
//  - M, N and K edges: TMA zero-fills out-of-range box elements (K tails add 0); the epilogue
//    masks rows >= M and cols >= N. beta == 0 never reads C.
//  - Split-K writes 4-byte partials to `partial` ([batch][split][M][N]); gemm_splitk_reduce
//    sums them in split order, so results do not depend on scheduling.
#pragma once

#include "cuda/tile/tma.cuh"
#include "cuda/tile/wgmma.cuh"

namespace tc::cuda {

using namespace tc::tile;

enum class CType : int { f32 = 0, f16 = 1, bf16 = 2, i32 = 4 };

struct WgmmaArgs {
  i32 M, N, K, batch;
  i32 tiles_m, tiles_n, splits, kb_per_split, kb_total;
  i32 a_bcast, b_bcast;  // batch stride 0: every batch reads matrix 0
  float alpha, beta;
  void* c;
  i64 ldc, stride_c;
  CType c_type;
  i32 c_vec2;     // C rows/pointer allow 2-element stores
  void* partial;  // split-K partials (splits > 1), else nullptr
};

constexpr int kWgmmaBM = 128;
constexpr int kWgmmaGroupM = 16;

template <int BN, int STAGES>
struct WgmmaSmem {
  static constexpr int a_bytes = kWgmmaBM * 128;
  static constexpr int b_bytes = BN * 128;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  // 1 KB slack for the 1024-byte alignment of the dynamic buffer, then the barriers.
  static constexpr int total = 1024 + STAGES * stage_bytes + 2 * STAGES * 8;
};

struct WorkUnit {
  i32 b, s, m0, n0, kb0, kb1;
};

__device__ __forceinline__ WorkUnit decode_unit(const WgmmaArgs& a, i32 t) {
  const i32 per = a.tiles_m * a.tiles_n;
  const i32 bs = t / per, r = t % per;
  const i32 group = kWgmmaGroupM * a.tiles_n;
  const i32 first_m = (r / group) * kWgmmaGroupM;
  const i32 gm = min(a.tiles_m - first_m, kWgmmaGroupM);
  const i32 in = r % group;
  WorkUnit u;
  u.b = bs / a.splits;
  u.s = bs % a.splits;
  u.m0 = (first_m + in % gm) * kWgmmaBM;
  u.n0 = (in / gm);  // scaled by BN by the caller
  u.kb0 = u.s * a.kb_per_split;
  u.kb1 = min(a.kb_total, u.kb0 + a.kb_per_split);
  return u;
}

template <class T>
struct AccOf {
  using type = float;
};
template <>
struct AccOf<i8> {
  using type = i32;
};

// Stores one consumer's 64 x BN accumulator block (see wgmma.cuh for the layout).
template <class OutT, int BN, class Acc>
__device__ __forceinline__ void store_tile(const WgmmaArgs& a, const Acc (&d)[BN / 2],
                                           const WorkUnit& u, i32 row_base) {
  const i32 l = threadIdx.x % 32, w = (threadIdx.x / 32) % 4;
  OutT* c = static_cast<OutT*>(a.c) + i64(u.b) * a.stride_c;
  const bool read_c = a.beta != 0.0f;
#pragma unroll
  for (int r = 0; r < BN / 2; r += 2) {
    const i32 row = row_base + 16 * w + l / 4 + 8 * ((r >> 1) & 1);
    const i32 col = u.n0 + 8 * (r >> 2) + 2 * (l % 4);
    if (row >= a.M || col >= a.N) continue;
    OutT* p = c + i64(row) * a.ldc + col;
    const bool two = col + 1 < a.N;
    if constexpr (is_same<OutT, i32>::value) {  // int8 GEMM: exact integer epilogue
      i32 v0 = d[r], v1 = d[r + 1];
      if (read_c) {
        v0 += p[0];
        if (two) v1 += p[1];
      }
      p[0] = v0;
      if (two) p[1] = v1;
    } else {
      float v0 = a.alpha * d[r], v1 = a.alpha * d[r + 1];
      if (two && a.c_vec2) {
        if constexpr (sizeof(OutT) == 4) {
          float2 o = read_c ? *reinterpret_cast<float2*>(p) : float2{0.f, 0.f};
          *reinterpret_cast<float2*>(p) = float2{v0 + a.beta * o.x, v1 + a.beta * o.y};
        } else {
          if (read_c) {
            v0 += a.beta * to_f32(p[0]);
            v1 += a.beta * to_f32(p[1]);
          }
          *reinterpret_cast<u32*>(p) = pack2<OutT>(v0, v1);
        }
      } else {
        if (read_c) v0 += a.beta * to_f32(p[0]);
        p[0] = from_f32<OutT>(v0);
        if (two) {
          if (read_c) v1 += a.beta * to_f32(p[1]);
          p[1] = from_f32<OutT>(v1);
        }
      }
    }
  }
}

// Split-K: raw 4-byte partial sums, [batch][split][M][N].
template <int BN, class Acc>
__device__ __forceinline__ void store_partial(const WgmmaArgs& a, const Acc (&d)[BN / 2],
                                              const WorkUnit& u, i32 row_base) {
  const i32 l = threadIdx.x % 32, w = (threadIdx.x / 32) % 4;
  Acc* c = static_cast<Acc*>(a.partial) + (i64(u.b) * a.splits + u.s) * i64(a.M) * a.N;
#pragma unroll
  for (int r = 0; r < BN / 2; r += 2) {
    const i32 row = row_base + 16 * w + l / 4 + 8 * ((r >> 1) & 1);
    const i32 col = u.n0 + 8 * (r >> 2) + 2 * (l % 4);
    if (row >= a.M || col >= a.N) continue;
    Acc* p = c + i64(row) * a.N + col;
    p[0] = d[r];
    if (col + 1 < a.N) p[1] = d[r + 1];
  }
}

template <class T, int TA, int TB, int BN>
__device__ __forceinline__ void wgmma_kstep(typename AccOf<T>::type (&d)[BN / 2], u64 da, u64 db,
                                            u32 acc) {
  if constexpr (sizeof(T) == 1)
    WgmmaS8<BN>::run(d, da, db, acc);
  else
    Wgmma16<BN, T, TA, TB>::run(d, da, db, acc);
}

// TA = 1: A is M-major (transpose_a); TB = 1: B is N-major (B stored K x N, !transpose_b).
template <class T, int TA, int TB, int BN, int STAGES>
__global__ void __launch_bounds__(384, 1)
    gemm_wgmma_kernel(const __grid_constant__ TmaMap map_a, const __grid_constant__ TmaMap map_b,
                      const WgmmaArgs args) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Acc = typename AccOf<T>::type;
  using S = WgmmaSmem<BN, STAGES>;
  constexpr int BK = 128 / sizeof(T);  // elements of K per stage
  extern __shared__ u8 smem_raw[];
  u8* smem = reinterpret_cast<u8*>((reinterpret_cast<u64>(smem_raw) + 1023) & ~u64(1023));
  mbarrier* full = reinterpret_cast<mbarrier*>(smem + STAGES * S::stage_bytes);
  mbarrier* empty = full + STAGES;

  const int wg = threadIdx.x / 128;
  const i32 units = args.batch * args.splits * args.tiles_m * args.tiles_n;
  if (threadIdx.x == 0) {
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 8);  // lane 0 of each of the 8 consumer warps
    }
    mbar_fence_init();
  }
  __syncthreads();

  if (wg == 0) {
    warpgroup_reg_dealloc<40>();
    if (threadIdx.x == 0) {
      int stage = 0;
      u32 phase = 0;
      for (i32 t = blockIdx.x; t < units; t += gridDim.x) {
        WorkUnit u = decode_unit(args, t);
        const i32 n0 = u.n0 * BN;
        const i32 ba = args.a_bcast ? 0 : u.b, bb = args.b_bcast ? 0 : u.b;
        for (i32 kb = u.kb0; kb < u.kb1; ++kb) {
          mbar_wait(&empty[stage], phase ^ 1);
          u8* sa = smem + stage * S::stage_bytes;
          u8* sb = sa + S::a_bytes;
          mbar_arrive_expect_tx(&full[stage], S::stage_bytes);
          const i32 k0 = kb * BK;
          if (TA) {
            tma_load_3d(sa, &map_a, &full[stage], u.m0, k0, ba);
            tma_load_3d(sa + 8192, &map_a, &full[stage], u.m0 + 64, k0, ba);
          } else {
            tma_load_3d(sa, &map_a, &full[stage], k0, u.m0, ba);
          }
          if (TB) {
#pragma unroll
            for (int j = 0; j < BN / 64; ++j)
              tma_load_3d(sb + 8192 * j, &map_b, &full[stage], n0 + 64 * j, k0, bb);
          } else {
            tma_load_3d(sb, &map_b, &full[stage], k0, n0, bb);
          }
          if (++stage == STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    warpgroup_reg_alloc<232>();
    const int cw = wg - 1;  // consumer index: rows 64 cw .. 64 cw + 63 of the tile
    int stage = 0;
    u32 phase = 0;
    Acc d[BN / 2];
    for (i32 t = blockIdx.x; t < units; t += gridDim.x) {
      WorkUnit u = decode_unit(args, t);
      u.n0 *= BN;
      int prev = -1;
      for (i32 kb = u.kb0; kb < u.kb1; ++kb) {
        mbar_wait(&full[stage], phase);
        const u32 sa = smem_addr(smem + stage * S::stage_bytes);
        const u32 sb = sa + S::a_bytes;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          // K-major: +32 bytes per k-step inside the 128-byte swizzled row.
          // MN-major: +16 (or 32 for s8) K-rows of 128 bytes = 2048 bytes per k-step.
          const u64 da = TA ? make_smem_desc_sw128(sa + cw * 8192 + kk * 2048, 8192, 1024)
                            : make_smem_desc_sw128(sa + cw * 8192 + kk * 32, 16, 1024);
          const u64 db = TB ? make_smem_desc_sw128(sb + kk * 2048, 8192, 1024)
                            : make_smem_desc_sw128(sb + kk * 32, 16, 1024);
          wgmma_kstep<T, TA, TB, BN>(d, da, db, (kb > u.kb0 || kk > 0) ? 1u : 0u);
        }
        wgmma_commit();
        wgmma_wait<1>();  // the previous stage's batch has finished reading its buffers
        if (prev >= 0 && threadIdx.x % 32 == 0) mbar_arrive(&empty[prev]);
        prev = stage;
        if (++stage == STAGES) {
          stage = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      if (prev >= 0 && threadIdx.x % 32 == 0) mbar_arrive(&empty[prev]);
      const i32 row_base = u.m0 + 64 * cw;
      if (args.partial) {
        store_partial<BN>(args, d, u, row_base);
      } else if constexpr (sizeof(T) == 1) {
        store_tile<i32, BN>(args, d, u, row_base);
      } else {
        switch (args.c_type) {
          case CType::f32:
            store_tile<float, BN>(args, d, u, row_base);
            break;
          case CType::f16:
            store_tile<f16, BN>(args, d, u, row_base);
            break;
          default:
            store_tile<bf16, BN>(args, d, u, row_base);
            break;
        }
      }
    }
  }
#endif
}

}  // namespace tc::cuda
