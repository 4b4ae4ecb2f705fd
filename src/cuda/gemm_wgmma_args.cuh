// Arguments, shared-memory plan and persistent work decomposition of the sm_90a GEMM kernel
// (gemm_wgmma.cuh). Device code only; the planner fills WgmmaArgs on the host.
#pragma once

#include "cuda/tile/grid_dep.cuh"
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
  i32 c_trans;    // operands swapped: the M x N result is C^T, element (m, n) goes to C[n][m]
  i32 c_stage;    // with c_trans, 16-bit C, beta == 0: via shared memory, a C row per warp store
  i32 tma_store;  // epilogue through shared memory and TMA stores (map_c is valid)
  // Columns [0, n_tma) go through TMA stores, [n_tma, N) from registers. TMA stores write whole
  // 16-byte chunks: a row end that is not 16-byte aligned would be written up to the next
  // boundary, i.e. into C's row padding (ldc > N). So the map's extent is N rounded down to
  // 16 bytes (wgmma_tma_cols) and the few tail columns are stored directly.
  i32 n_tma;
  void* partial;  // split-K partials (splits > 1), else nullptr
  // In-cluster split-K (gemm_wgmma_ksplit.cuh): clusters of `ksplit` CTAs share one tile, rank
  // r running k-blocks [r * kb_per_split, (r + 1) * kb_per_split); 0 or 1 = off. The grid is
  // then tiles x ksplit (one tile per cluster) and splits == 1.
  i32 ksplit;
};

// Columns of an n-wide C with csz-byte elements that TMA stores may cover (see n_tma).
__host__ __device__ constexpr i32 wgmma_tma_cols(i32 n, int csz) {
  return n - n % (16 / csz);
}

constexpr int kWgmmaGroupM = 16;
constexpr int kWgmmaEpiBytes = 16384;  // epilogue buffer per consumer warpgroup

template <int BM, int BN, int STAGES>
struct WgmmaSmem {
  static constexpr int consumers = BM / 64;
  static constexpr int a_bytes = BM * 128;
  static constexpr int b_bytes = BN * 128;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static constexpr int epi_offset = STAGES * stage_bytes;  // 1024-aligned: stages are 8 KB units
  static constexpr int bar_offset = epi_offset + consumers * kWgmmaEpiBytes;
  // 1 KB slack for the 1024-byte alignment of the dynamic buffer, then the barriers.
  static constexpr int total = 1024 + bar_offset + 2 * STAGES * 8;
  static_assert(total <= 232448, "over the 227 KB opt-in limit");
};

struct WorkUnit {
  i32 b, s, m0, n0, kb0, kb1;
};

// Rows of units: with CL = 2 (CTA pairs), a unit is two vertically adjacent tiles and `rank`
// (the CTA's rank in its cluster) picks one; a pair may stick out below M (masked rows).
template <int CL>
__device__ __forceinline__ i32 unit_rows(const WgmmaArgs& a) {
  return (a.tiles_m + CL - 1) / CL;
}
template <int CL>
__device__ __forceinline__ i32 unit_count(const WgmmaArgs& a) {
  return a.batch * a.splits * unit_rows<CL>(a) * a.tiles_n;
}

template <int BM, int CL = 1>
__device__ __forceinline__ WorkUnit decode_unit(const WgmmaArgs& a, i32 t, i32 rank = 0) {
  const i32 tm = unit_rows<CL>(a);
  const i32 per = tm * a.tiles_n;
  const i32 bs = t / per, r = t % per;
  const i32 group = kWgmmaGroupM * a.tiles_n;
  const i32 first_m = (r / group) * kWgmmaGroupM;
  const i32 gm = min(tm - first_m, kWgmmaGroupM);
  const i32 in = r % group;
  WorkUnit u;
  u.b = bs / a.splits;
  u.s = bs % a.splits;
  u.m0 = ((first_m + in % gm) * CL + rank) * BM;
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

}  // namespace tc::cuda
