// The sm_90a GEMM kernel: C = alpha * op(A) op(B) + beta * C, row-major, f32/s32 accumulators.
//
// Contract (hopper.md sections 1-5):
//  - CTA = 128 (1 + BM / 64) threads: warpgroup 0 produces (one thread issues TMA), each
//    further warpgroup consumes 64 rows of the BM x BN tile. BM = 128 (two consumers; setmaxnreg
//    40 / 232) or BM = 64 (one consumer, for small M or few tiles: twice the CTAs in flight).
//  - K step per stage: 128 bytes of K (BK = 64 for 16-bit types, 128 for s8), which is exactly
//    one 128B-swizzle atom wide, so every operand box is 128 bytes on its inner dimension.
//  - Shared memory per stage: A BM x 128 B, B BN x 128 B (48 KB at 128 x 256); STAGES stages,
//    1024-byte aligned, then 16 KB of epilogue buffer per consumer, then the mbarriers.
//  - A K-major (row-major M x K): one box {BK, 128}. A M-major (transpose_a, K x M): two boxes
//    {64 m, 64 k}, one per consumer. B K-major (transpose_b, N x K): one box {BK, BN}.
//    B N-major (K x N): BN/64 boxes {64 n, 64 k}, 8 KB apart (that is the descriptor's LBO).
//  - Persistent: grid = min(work units, SMs); a unit is (batch, split, tile), tiles grouped
//    GROUP_M rows deep along M so that concurrently running CTAs share A and B in L2.
//  - M, N and K edges: TMA zero-fills out-of-range box elements (K tails add 0); the epilogue
//    masks rows >= M and cols >= N. beta == 0 never reads C.
//  - Epilogue, when C is TMA-legal and beta == 0 (args.tma_store): each consumer converts its
//    accumulators into its 16 KB buffer (two 64-row x 128-byte boxes, 128B-swizzled, so the
//    st.shared of a warp hit 32 distinct banks) and one thread issues TMA stores. The stores
//    drain while the consumer already runs the next tile's wgmmas; the buffer is only waited
//    for (bulk wait_group.read) when it is refilled. TMA stores write whole 16-byte chunks, so
//    the C map ends at N rounded down to 16 bytes (args.n_tma) and the last tile stores the
//    ragged row end from registers (else the chunk would reach into C's row padding).
//    Otherwise: stores from registers, transposed (C[n][m]) when the planner swapped the
//    operands to run C^T = B^T A^T in fewer waves (args.c_trans); with args.c_stage the
//    transposed block goes through the epilogue buffer and leaves in whole C row segments
//    (gemm_wgmma_epilogue_trans.cuh).
//  - In-cluster split-K (args.ksplit > 1, CL = 1 instances launched with cluster dims):
//    one unit per cluster, each rank a slice of K, reduced through DSMEM into rank 0 in rank
//    order (gemm_wgmma_ksplit.cuh).
//  - Split-K writes 4-byte partials to `partial` ([batch][split][M][N]); gemm_splitk_reduce
//    sums them in split order, so results do not depend on scheduling.
#pragma once

#include "cuda/gemm_wgmma_epilogue.cuh"
#include "cuda/gemm_wgmma_epilogue_trans.cuh"
#include "cuda/gemm_wgmma_ksplit.cuh"

namespace tc::cuda {

using namespace tc::tile;
template <class T, int TA, int TB, int BN>
__device__ __forceinline__ void wgmma_kstep(typename AccOf<T>::type (&d)[BN / 2], u64 da, u64 db,
                                            u32 acc) {
  if constexpr (sizeof(T) == 1)
    WgmmaS8<BN>::run(d, da, db, acc);
  else
    Wgmma16<BN, T, TA, TB>::run(d, da, db, acc);
}

// TA = 1: A is M-major (transpose_a); TB = 1: B is N-major (B stored K x N, !transpose_b).
// CL = 2: CTA pairs (cluster 2 x 1 x 1) on vertically adjacent tiles share B: each CTA loads
// half of B's stage and multicasts it to both, so B crosses L2 -> SM once per pair. Each CTA's
// empty barriers then count both CTAs' consumer warps (its multicast writes the peer's stage).
template <class T, int TA, int TB, int BM, int BN, int STAGES, int CL>
__global__ void __launch_bounds__(128 * (1 + BM / 64), 1)
    gemm_wgmma_kernel(const __grid_constant__ TmaMap map_a, const __grid_constant__ TmaMap map_b,
                      const __grid_constant__ TmaMap map_c, const WgmmaArgs args) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Acc = typename AccOf<T>::type;
  using S = WgmmaSmem<BM, BN, STAGES>;
  constexpr int BK = 128 / sizeof(T);  // elements of K per stage
  extern __shared__ u8 smem_raw[];
  u8* smem = reinterpret_cast<u8*>((reinterpret_cast<u64>(smem_raw) + 1023) & ~u64(1023));
  mbarrier* full = reinterpret_cast<mbarrier*>(smem + S::bar_offset);
  mbarrier* empty = full + STAGES;

  const int wg = threadIdx.x / 128;
  const i32 units = unit_count<CL>(args);
  const i32 rank = CL == 2 ? i32(cluster_ctarank()) : 0;
  // In-cluster split-K (CL = 1 instances only): the cluster's ks CTAs share each unit.
  const i32 ks = CL == 1 && args.ksplit > 1 ? args.ksplit : 1;
  const i32 ksrank = ks > 1 ? i32(cluster_ctarank()) : 0;
  const i32 first_unit = blockIdx.x / (CL * ks), unit_step = gridDim.x / (CL * ks);
  // The slice of K of cluster rank ksrank (the unit itself is unsplit: args.splits == 1).
  auto k_slice = [&](WorkUnit& u) {
    if (ks == 1) return;
    u.kb0 = ksrank * args.kb_per_split;
    u.kb1 = min(args.kb_total, u.kb0 + args.kb_per_split);
  };
  if (threadIdx.x == 0) {
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
    if (args.tma_store) tma_prefetch_map(&map_c);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 4 * S::consumers * CL);  // lane 0 of each consumer warp
    }
    mbar_fence_init();
  }
  if constexpr (CL == 2)
    cluster_sync();  // the peer's barriers exist before any multicast or remote arrive
  else
    __syncthreads();
  // PDL: the prologue above overlapped the previous kernel's tail; inputs and C are touched
  // only after it has completed. The next kernel may then start its own prologue.
  grid_dep_wait();
  grid_dep_launch_dependents();

  if (wg == 0) {
    // With one consumer (256 threads, one CTA per SM) every warp already has ample registers.
    if constexpr (S::consumers == 2) warpgroup_reg_dealloc<40>();
    if (threadIdx.x == 0) {
      int stage = 0;
      u32 phase = 0;
      for (i32 t = first_unit; t < units; t += unit_step) {
        WorkUnit u = decode_unit<BM, CL>(args, t, rank);
        k_slice(u);
        const i32 n0 = u.n0 * BN;
        const i32 ba = args.a_bcast ? 0 : u.b, bb = args.b_bcast ? 0 : u.b;
        for (i32 kb = u.kb0; kb < u.kb1; ++kb) {
          mbar_wait(&empty[stage], phase ^ 1);
          u8* sa = smem + stage * S::stage_bytes;
          u8* sb = sa + S::a_bytes;
          mbar_arrive_expect_tx(&full[stage], S::stage_bytes);
          const i32 k0 = kb * BK;
          if (TA) {
#pragma unroll
            for (int j = 0; j < BM / 64; ++j)
              tma_load_3d(sa + 8192 * j, &map_a, &full[stage], u.m0 + 64 * j, k0, ba);
          } else {
            tma_load_3d(sa, &map_a, &full[stage], k0, u.m0, ba);
          }
          if constexpr (CL == 2) {  // this CTA's half of B, to both CTAs
            if (TB) {
#pragma unroll
              for (int j = rank * BN / 128; j < (rank + 1) * BN / 128; ++j)
                tma_load_3d_multicast(sb + 8192 * j, &map_b, &full[stage], n0 + 64 * j, k0, bb,
                                      u16(3));
            } else {  // the host's B box is BN / 2 rows here
              tma_load_3d_multicast(sb + rank * (BN / 2) * 128, &map_b, &full[stage], k0,
                                    n0 + rank * (BN / 2), bb, u16(3));
            }
          } else if (TB) {
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
    if (ks > 1) {  // the consumers' two cluster barriers (one unit per cluster)
      __syncwarp();
      cluster_sync();
      cluster_sync();
    }
  } else {
    if constexpr (S::consumers == 2) warpgroup_reg_alloc<232>();
    const int cw = wg - 1;  // consumer index: rows 64 cw .. 64 cw + 63 of the tile
    u8* epi = smem + S::epi_offset + cw * kWgmmaEpiBytes;
    int stage = 0;
    u32 phase = 0;
    Acc d[BN / 2];
    // Frees a stage in this CTA and, with CL = 2, in the peer (whose producer multicasts into
    // this CTA's copy of the stage).
    auto release = [&](int s) {
      if (threadIdx.x % 32 != 0) return;
      mbar_arrive(&empty[s]);
      if constexpr (CL == 2) mbar_arrive_cluster(&empty[s], u32(rank ^ 1));
    };
    for (i32 t = first_unit; t < units; t += unit_step) {
      WorkUnit u = decode_unit<BM, CL>(args, t, rank);
      k_slice(u);
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
        if (prev >= 0) release(prev);
        prev = stage;
        if (++stage == STAGES) {
          stage = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      if (prev >= 0) release(prev);
      if (ks > 1) {
        if (u.kb0 >= u.kb1) {  // an empty slice (K shorter than the cluster): adds zeros
#pragma unroll
          for (int i = 0; i < BN / 2; ++i) d[i] = Acc(0);
        }
        const u32 stages = smem_addr(smem);
        fence_proxy_async();  // this CTA's generic accesses after its async-proxy ones
        cluster_sync();       // every main loop is done: rank 0's stages are free
        if (ksrank > 0) ksplit_send<BM, BN>(d, stages, ksrank, cw);
        cluster_sync();  // the partial sums have landed in rank 0
        if (ksrank > 0) continue;
        ksplit_add<BM, BN>(d, stages, ks, cw);
      }
      const i32 row_base = u.m0 + 64 * cw;
      if (args.partial) {
        store_partial<BN>(args, d, u, row_base);
      } else if constexpr (sizeof(T) == 1) {
        if (args.tma_store)
          store_tile_tma<i32, BN>(args, &map_c, d, u, row_base, epi, cw);
        else
          store_tile<i32, BN>(args, d, u, row_base);
      } else if (args.tma_store) {
        switch (args.c_type) {
          case CType::f32:
            store_tile_tma<float, BN>(args, &map_c, d, u, row_base, epi, cw);
            break;
          case CType::f16:
            store_tile_tma<f16, BN>(args, &map_c, d, u, row_base, epi, cw);
            break;
          default:
            store_tile_tma<bf16, BN>(args, &map_c, d, u, row_base, epi, cw);
            break;
        }
      } else if (args.c_stage) {  // transposed 16-bit C through shared memory, row by row
        if (args.c_type == CType::f16)
          store_tile_trans<f16, BN>(args, d, u, row_base, epi, cw);
        else
          store_tile_trans<bf16, BN>(args, d, u, row_base, epi, cw);
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
    // The TMA stores must be complete before the CTA exits: a PDL successor's grid_dep_wait()
    // then sees C written (waiting for .read alone, as CUTLASS does, would be enough for the
    // buffer; the full wait costs only the last tile's store latency).
    if (args.tma_store && threadIdx.x % 128 == 0) bulk_wait<0>();
  }
  // No CTA may exit while its peer can still multicast into it or arrive on its barriers.
  if constexpr (CL == 2) cluster_sync();
#endif
}

}  // namespace tc::cuda
