// int8 -> int32 GEMM on sm_90a with a ping-pong consumer schedule (the 128 x 128 tile).
//
// Why: the cooperative kernel (gemm_wgmma.cuh) splits each 128 x 256 tile over its two consumer
// warpgroups, so both reach the epilogue together and the tensor cores idle while the 128 KB s32
// tile leaves through 16 KB buffers. An s8 tile has half the k-blocks of a 16-bit one and twice
// the output bytes, so that pause weighs four times as much per FLOP as in 16-bit.
// Here each consumer owns whole 128 x 128 tiles (two m64n128k32 per k32 step, 128 s32
// accumulators per thread) and the two take alternate tiles of the CTA's persistent sequence:
// while one stores its tile, the other's wgmmas run.
//
// Contract (the host side is the cooperative kernel's, at BM = BN = 128, unchanged):
//  - CTA = 384 threads: warpgroup 0 produces (one thread issues TMA; setmaxnreg 40), warpgroups
//    1 and 2 consume (232 registers). Maps: A {128 k, 128 rows}, B {128 k, 128 rows}, both
//    K-major; C {32 s32 cols, 64 rows}.
//  - Shared memory: WgmmaSmem<128, 128, 6>: six 32 KB stages, one 16 KB epilogue buffer per
//    consumer, the stage barriers, then the two order barriers (kS8PingSmemBytes).
//  - The CTA's units are t = blockIdx.x + i gridDim.x; consumer i % 2 takes unit i. The producer
//    loads every unit's k-blocks in that order into one ring, so a consumer skips the other's
//    k-blocks in its ring position (stage, phase) without waiting. Each stage is released by
//    the 4 warps of the one consumer that read it.
//  - Order barriers (order[c]: "consumer c may start its next unit"): a consumer starts a unit's
//    main loop only after the other consumer has passed every full-barrier wait of the unit
//    before. Required for correctness, not only for the schedule: mbarrier.try_wait.parity
//    cannot tell "phase n completed" from "phase n - 2 completed", so a consumer that skipped
//    ahead and waited on a stage two phases early would pass at once and read stale data (the
//    first version did so and hung on the H200, 22:04 UTC). Each consumer arrives on the
//    other's order barrier after its main loop, so the two main loops follow each other and
//    each epilogue overlaps the other's wgmmas.
//  - Epilogues and split-K are the cooperative kernel's (store_tile_tma / store_tile /
//    store_partial), called once per 64-row half; results are bit-identical to it.
//  - TC_S8_PINGPONG: "0" never, "1" for every 128 x 128 s8 launch, unset: when the CTAs get two
//    tiles or more on average (units >= 2 x grid), since a lone tile gains nothing from it.
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/knobs.h"
#include "cuda/gemm_wgmma_epilogue.cuh"

namespace tc::cuda {

constexpr int kS8PingStages = 6;
using S8PingSmem = WgmmaSmem<128, 128, kS8PingStages>;
constexpr int kS8PingSmemBytes = S8PingSmem::total + 2 * 8;  // + the two order barriers
static_assert(kS8PingSmemBytes <= 232448, "over the 227 KB opt-in limit");

// Moves a ring position (stage, phase) n k-blocks on.
__device__ __forceinline__ void ring_advance(int& stage, u32& phase, int n) {
  stage += n;
  phase ^= u32(stage / kS8PingStages) & 1u;
  stage %= kS8PingStages;
}

// A template (one instance, STAGES = kS8PingStages) so that every includer may see it.
template <int STAGES>
__global__ void __launch_bounds__(384, 1)
    gemm_s8_pingpong_kernel(const __grid_constant__ TmaMap map_a,
                            const __grid_constant__ TmaMap map_b,
                            const __grid_constant__ TmaMap map_c, const WgmmaArgs args) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(STAGES == kS8PingStages, "ring_advance and S8PingSmem assume this depth");
  using S = S8PingSmem;
  extern __shared__ u8 smem_raw[];
  u8* smem = reinterpret_cast<u8*>((reinterpret_cast<u64>(smem_raw) + 1023) & ~u64(1023));
  mbarrier* full = reinterpret_cast<mbarrier*>(smem + S::bar_offset);
  mbarrier* empty = full + STAGES;
  mbarrier* order = empty + STAGES;

  const int wg = threadIdx.x / 128;
  const i32 units = unit_count<1>(args);
  if (threadIdx.x == 0) {
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
    if (args.tma_store) tma_prefetch_map(&map_c);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 4);  // lane 0 of each warp of the consumer that read the stage
    }
    mbar_init(&order[0], 1);
    mbar_init(&order[1], 1);
    mbar_fence_init();
  }
  __syncthreads();
  grid_dep_wait();  // PDL: inputs and C are touched only after the previous kernel completed
  grid_dep_launch_dependents();

  if (wg == 0) {
    warpgroup_reg_dealloc<40>();
    if (threadIdx.x == 0) {
      int stage = 0;
      u32 phase = 0;
      for (i32 t = blockIdx.x; t < units; t += gridDim.x) {
        const WorkUnit u = decode_unit<128>(args, t);
        const i32 ba = args.a_bcast ? 0 : u.b, bb = args.b_bcast ? 0 : u.b;
        for (i32 kb = u.kb0; kb < u.kb1; ++kb) {
          mbar_wait(&empty[stage], phase ^ 1);
          u8* sa = smem + stage * S::stage_bytes;
          mbar_arrive_expect_tx(&full[stage], S::stage_bytes);
          tma_load_3d(sa, &map_a, &full[stage], kb * 128, u.m0, ba);
          tma_load_3d(sa + S::a_bytes, &map_b, &full[stage], kb * 128, u.n0 * 128, bb);
          ring_advance(stage, phase, 1);
        }
      }
    }
    return;
  }
  warpgroup_reg_alloc<232>();
  const int cw = wg - 1;
  u8* epi = smem + S::epi_offset + cw * kWgmmaEpiBytes;
  int stage = 0;
  u32 phase = 0;
  i32 d0[64], d1[64];  // rows 0..63 and 64..127 of the tile
  int i = 0;
  for (i32 t = blockIdx.x; t < units; t += gridDim.x, ++i) {
    WorkUnit u = decode_unit<128>(args, t);
    if ((i & 1) != cw) {  // the other consumer's tile: its k-blocks pass through the ring
      ring_advance(stage, phase, u.kb1 - u.kb0);
      continue;
    }
    u.n0 *= 128;
    // The other consumer's signal after unit i - 1 (its ((i - 1) / 2)-th signal to us).
    if (i > 0) mbar_wait(&order[cw], u32((i - 1) / 2) & 1u);
    int prev = -1;
    for (i32 kb = u.kb0; kb < u.kb1; ++kb) {
      mbar_wait(&full[stage], phase);
      const u32 sa = smem_addr(smem + stage * S::stage_bytes);
      const u32 sb = sa + S::a_bytes;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {  // K-major: +32 bytes per k32 step in the swizzled row
        const u64 db = make_smem_desc_sw128(sb + kk * 32, 16, 1024);
        const u32 acc = (kb > u.kb0 || kk > 0) ? 1u : 0u;
        WgmmaS8<128>::run(d0, make_smem_desc_sw128(sa + kk * 32, 16, 1024), db, acc);
        WgmmaS8<128>::run(d1, make_smem_desc_sw128(sa + 8192 + kk * 32, 16, 1024), db, acc);
      }
      wgmma_commit();
      wgmma_wait<1>();  // the previous k-block's wgmmas have read their stage
      if (prev >= 0 && threadIdx.x % 32 == 0) mbar_arrive(&empty[prev]);
      prev = stage;
      ring_advance(stage, phase, 1);
    }
    if (threadIdx.x % 128 == 0) mbar_arrive(&order[cw ^ 1]);  // all our full waits are done
    wgmma_wait<0>();
    if (prev >= 0 && threadIdx.x % 32 == 0) mbar_arrive(&empty[prev]);
    if (args.partial) {
      store_partial<128>(args, d0, u, u.m0);
      store_partial<128>(args, d1, u, u.m0 + 64);
    } else if (args.tma_store) {
      store_tile_tma<i32, 128>(args, &map_c, d0, u, u.m0, epi, cw);
      store_tile_tma<i32, 128>(args, &map_c, d1, u, u.m0 + 64, epi, cw);
    } else {
      store_tile<i32, 128>(args, d0, u, u.m0);
      store_tile<i32, 128>(args, d1, u, u.m0 + 64);
    }
  }
  // A PDL successor's grid_dep_wait() must see C written: complete the stores before exit.
  if (args.tma_store && threadIdx.x % 128 == 0) bulk_wait<0>();
#endif
}

// TC_S8_PINGPONG (see the header comment) for `units` 128 x 128 work units on `grid` CTAs;
// read per call (a cached load, core/knobs.h) so that one process can A/B it. The planner may
// ask the same question.
inline bool s8_pingpong_wanted(long long units, int grid) {
  const char* v = knobs::get(knobs::kS8Pingpong);
  if (v && std::strcmp(v, "0") == 0) return false;
  if (v && std::strcmp(v, "1") == 0) return true;
  return units >= 2ll * grid;
}
// Never for an in-cluster split-K launch (WgmmaArgs::ksplit, where the args have it): that is
// the cooperative kernel's DSMEM reduction, which this kernel does not do.
template <class Args>
bool s8_pingpong_for(const Args& a, int grid) {
  if constexpr (requires { a.ksplit; })
    if (a.ksplit > 1) return false;
  return s8_pingpong_wanted(1ll * a.batch * a.splits * a.tiles_m * a.tiles_n, grid);
}

// Launches so far in this process (tests check that the ping-pong kernel really ran).
inline std::atomic<long long>& s8_pingpong_launches() {
  static std::atomic<long long> n{0};
  return n;
}

}  // namespace tc::cuda
