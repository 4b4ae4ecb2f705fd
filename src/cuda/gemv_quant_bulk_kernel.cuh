// The bulk GEMV's kernel (gemv_quant_bulk.cu launches it; the file comment there says how it
// works): per CTA one producer lane streaming whole weight rows into a ring of shared-memory
// stages, consumer warps quantizing X (gemv_quant_bulk_x.cuh) and dotting rows
// (gemv_quant_bulk_units.cuh), the barriers' layout shared with the host's geometry (kHead,
// kMaxStages, stage_groups).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/gemv_quant_bulk_trace.cuh"
#include "cuda/gemv_quant_bulk_units.cuh"
#include "cuda/gemv_quant_bulk_x.cuh"
#include "cuda/quant_bulk.cuh"

namespace tc::cuda::quant::bulk_gemv {

using bulk_trace::kTraceWords;
using bulk_trace::now_ns;

// Consumer warps (8 or 16: the host's Config); one more warp is the producer.
template <int CW>
constexpr int kThreadsOf = (CW + 1) * 32;
constexpr int kMaxStages = 16;  // barrier slots; Config::stages (default 8) is the ring's cap
constexpr size_t kHead = 384;   // the barriers: full, empty, xready, xpeer

// Warps consuming one stage (RP = 1 or 2 rows each: a pair shares the X loads) and groups of
// them taking turns on stages. A group waits on a slot's `full` barrier two uses ahead only if
// the slot's previous use belongs to another group, and parity waits cannot tell phases two
// apart: so S is a multiple of the number of groups (a slot's previous use is the group's own).
__host__ __device__ inline int stage_warps(int R, int RP, int CW) {
  return min((R + RP - 1) / RP, CW);
}
__host__ __device__ inline int stage_groups(int R, int RP, int CW, int S) {
  return min(CW / stage_warps(R, RP, CW), S);
}

// Diagnostics (TC_QUANT_BULK_ABLATE, Y not valid): 1 the launch chain alone (same resources,
// no work), 2 the weight stream alone (no X, no dots), 3 no X quantization.
enum Ablate { kFull = 0, kChainOnly = 1, kStreamOnly = 2, kNoXQuant = 3 };

// XR > 0: each lane keeps the XR units of X it dots (u = lane + 32 j, U <= 32 XR) in registers
// for all its rows, instead of loading them from shared memory per row (M = 1). N16: the
// nibble dots of unit_dot (gemv_quant_bulk_units.cuh); false only for the A/B knob.
// XC = 2 (M = 1): the two CTAs of a cluster quantize half of X's units each and store the
// codes into both CTAs' shared memory, so X crosses from L2 to the SMs once per cluster instead
// of once per CTA (132 copies of X share L2's bandwidth with the weight stream).
template <int FMT, int MT, int kCW, int kMinBlocks, int XR, bool N16 = true, int XC = 1>
__global__ void __launch_bounds__(kThreadsOf<kCW>, kMinBlocks)
    bulk_gemv_kernel(const uint8_t* __restrict__ W, const void* __restrict__ X, int xk,
                     float* __restrict__ Y, int M, int N, int K, uint32_t rb, int R, int RP, int S,
                     int first, int pace, int ablate, int xpairs, unsigned long long* trace) {
  static_assert(XC == 1 || (XC == 2 && MT == 1), "X by halves: pairs of CTAs, M = 1 only");
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* full = reinterpret_cast<uint64_t*>(smem);
  uint64_t* empty = full + kMaxStages;
  uint64_t* xready = empty + kMaxStages;  // X quantized (first > 0: the producer waits on it)
  uint64_t* xpeer = xready + 1;  // XC: the peer's half of X stored here (its consumer threads)
  const int U = K / 64;
  int4* xq = reinterpret_cast<int4*>(smem + kHead);  // [MT][4][U]
  int4* xm = xq + size_t(MT) * 4 * U;                // [MT][U]
  uint8_t* ring = reinterpret_cast<uint8_t*>(xm + size_t(MT) * U);
  const size_t stage = size_t(R) * rb;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int RW = stage_warps(R, RP, kCW), NG = stage_groups(R, RP, kCW, S);  // S % NG == 0
  const int64_t tiles = (int64_t(N) + R - 1) / R;
  const int t0 = int(tiles * blockIdx.x / gridDim.x);
  const int my = int(tiles * (blockIdx.x + 1) / gridDim.x) - t0;
  unsigned long long* tr = trace ? trace + size_t(blockIdx.x) * kTraceWords : nullptr;
  if (tr && threadIdx.x == 0) {
    tr[0] = now_ns();
    tr[6] = bulk_trace::smid() | (uint64_t(my) << 32);
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      bulk::bar_init(&full[s], 1);
      bulk::bar_init(&empty[s], uint32_t(RW));
    }
    bulk::bar_init(xready, 1);
    if constexpr (XC > 1) bulk::bar_init(xpeer, uint32_t(kCW * 32));
    bulk::fence_barrier_init();
  }
  __syncthreads();
  // XC: the cluster barrier's phase 0, which the consumers wait for before they store into the
  // peer (both CTAs run, their barriers are initialized); the producer only arrives.
  if constexpr (XC > 1) bulk::cluster_arrive_relaxed();
  bulk::grid_launch_dependents();
  if (ablate == kChainOnly) {
    bulk::grid_wait();
    return;
  }
  if (warp == kCW) {  // producer: W is never written by the previous grid (launch_gemv_bulk)
    if (lane == 0) {
      for (int s = 0; s < my; ++s) {
        const int slot = s % S;
        if (s >= S) bulk::bar_wait(&empty[slot], uint32_t((s / S - 1) & 1));
        if (s == first) bulk::bar_wait(xready, 0);  // the rest once X's loads are done
        // 0 < pace < S: at most `pace` stages in flight (stage s - pace has landed). Its slot
        // cannot have completed a later phase: stage s - pace + S > s is not issued yet.
        if (pace > 0 && pace < S && s >= pace)
          bulk::bar_wait(&full[(s - pace) % S], uint32_t(((s - pace) / S) & 1));
        const int64_t row0 = int64_t(t0 + s) * R;
        const uint32_t bytes = uint32_t(N - row0 < R ? N - row0 : R) * rb;
        bulk::bar_expect_tx(&full[slot], bytes);
        bulk::copy(ring + slot * stage, W + row0 * rb, bytes, &full[slot]);
      }
      if (tr) tr[5] = now_ns();
    }
    return;
  }
  bulk::grid_wait();  // X and Y belong to the previous grid until it is done
  if (tr && threadIdx.x == 0) tr[1] = now_ns();
  if constexpr (XC > 1) {  // units [U r / 2, U (r + 1) / 2) by rank r, into both CTAs
    const uint32_t rank = tile::cluster_ctarank();
    bulk::cluster_wait();
    if (ablate != kStreamOnly && ablate != kNoXQuant)
      quantize_x(X, xk, M, K, U, kCW * 32, xq, xm, xpairs != 0, 4 * (U * int(rank) / 2),
                 4 * (U * int(rank + 1) / 2), bulk::remote(xq, rank ^ 1u),
                 bulk::remote(xm, rank ^ 1u));
    // Each thread releases its stores into the peer (the producer is not waited for). Past the
    // wait on xpeer the peer stores nothing here, so either CTA may exit before the other.
    bulk::arrive_remote(bulk::remote(xpeer, rank ^ 1u));
    bulk::sync_consumers(kCW * 32);
    bulk::wait_cluster(xpeer, 0);
  } else {
    if (ablate != kStreamOnly && ablate != kNoXQuant)
      quantize_x(X, xk, M, K, U, kCW * 32, xq, xm, xpairs != 0);
    bulk::sync_consumers(kCW * 32);
  }
  if (threadIdx.x == 0) bulk::bar_arrive(xready);
  if (tr && threadIdx.x == 0) tr[2] = now_ns();
  unsigned long long last_full = 0;
  const int group = warp / RW, wr = warp % RW;
  if (group >= NG) return;  // fewer stages than groups: these warps only quantized X
  XUnit<MT> xr[XR > 0 ? XR : 1];
  const bool xfull = U == 32 * XR;  // every lane holds XR units (K = 4096 at XR = 2)
  if constexpr (XR > 0) {
#pragma unroll
    for (int j = 0; j < XR; ++j)
      if (lane + 32 * j < U) load_x<FMT, MT, N16>(xr[j], lane + 32 * j, U, M, xq, xm);
  }
  for (int s = group; s < my; s += NG) {
    const int slot = s % S;
    bulk::bar_wait(&full[slot], uint32_t((s / S) & 1));
    if (tr) {
      last_full = now_ns();
      if (threadIdx.x == 0 && s == 0) tr[3] = last_full;
    }
    if (ablate == kStreamOnly) {
      __syncwarp();
      if (lane == 0) bulk::bar_arrive(&empty[slot]);
      continue;
    }
    const int64_t row0 = int64_t(t0 + s) * R;
    const int rows = int(N - row0 < R ? N - row0 : R);
    for (int r = RP * wr; r < rows; r += RP * RW) {  // rows r and r + 1 share the X loads
      const uint8_t* row = ring + slot * stage + size_t(r) * rb;
      const bool two = RP == 2 && r + 1 < rows;
      float acc[2][MT] = {};
      if constexpr (XR > 0) {
        if (xfull && two) {  // straight-line: all four row-units' loads can go out first
#pragma unroll
          for (int j = 0; j < XR; ++j) {
            unit_dot<FMT, MT, N16>(row, lane + 32 * j, M, xr[j], acc[0]);
            unit_dot<FMT, MT, N16>(row + rb, lane + 32 * j, M, xr[j], acc[1]);
          }
        } else {
#pragma unroll
          for (int j = 0; j < XR; ++j) {
            if (lane + 32 * j >= U) break;
            unit_dot<FMT, MT, N16>(row, lane + 32 * j, M, xr[j], acc[0]);
            if (two) unit_dot<FMT, MT, N16>(row + rb, lane + 32 * j, M, xr[j], acc[1]);
          }
        }
      } else if (two) {
#pragma unroll 2
        for (int u = lane; u < U; u += 32) {
          XUnit<MT> x;
          load_x<FMT, MT, N16>(x, u, U, M, xq, xm);
          unit_dot<FMT, MT, N16>(row, u, M, x, acc[0]);
          unit_dot<FMT, MT, N16>(row + rb, u, M, x, acc[1]);
        }
      } else {
#pragma unroll 2
        for (int u = lane; u < U; u += 32) {
          XUnit<MT> x;
          load_x<FMT, MT, N16>(x, u, U, M, xq, xm);
          unit_dot<FMT, MT, N16>(row, u, M, x, acc[0]);
        }
      }
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        if (m > 0 && m >= M) break;
        if (two) {  // both rows in one butterfly: lanes 0..15 sum row r, lanes 16..31 row r + 1
          const bool hi = lane >= 16;
          float v = hi ? acc[1][m] : acc[0][m];
          v += __shfl_xor_sync(0xffffffffu, hi ? acc[0][m] : acc[1][m], 16);
#pragma unroll
          for (int o = 8; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
          if ((lane & 15) == 0) Y[size_t(m) * N + row0 + r + (hi ? 1 : 0)] = v;
        } else {  // one row (with RP = 1, row r + 1 belongs to another warp)
          float v = acc[0][m];
#pragma unroll
          for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
          if (lane == 0) Y[size_t(m) * N + row0 + r] = v;
        }
      }
    }
    __syncwarp();
    if (lane == 0) bulk::bar_arrive(&empty[slot]);
  }
  if (tr && lane == 0) {
    atomicMax(&tr[4], now_ns());
    atomicMax(&tr[7], last_full);
  }
}

}  // namespace tc::cuda::quant::bulk_gemv
