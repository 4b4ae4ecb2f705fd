// Planner and launcher of the sm_90a TMA + wgmma GEMM (kernel: gemm_wgmma.cuh).
// The plan picks the tile (128 x 256, 128 x 128, 64 x 128, 64 x 64, by estimated time over the
// SMs' waves), split-K for problems with too few tiles to fill the GPU, and which operands must
// be packed into the workspace (TMA-illegal pitch or base; non-K-major int8). The launch picks
// the epilogue: TMA stores when C is TMA-legal and beta == 0.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/knobs.h"
#include "cuda/gemm_kernels.h"
#include "cuda/gemm_pack_vec.h"
#include "cuda/gemm_wgmma_launch.cuh"
#include "cuda/gemm_wgmma_s8_pingpong.cuh"
#include "cuda/tile/tma_host.h"

namespace tc::cuda {
namespace {

size_t align256(size_t x) {
  return (x + 255) / 256 * 256;
}
int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Geometry of one operand as TMA sees it: `outer` rows of `inner` contiguous elements.
struct Operand {
  bool mn_major;  // inner dimension is M (A) or N (B), not K
  int64_t inner, outer, ld, stride;
  bool pack;            // copy into the workspace first
  bool pack_transpose;  // the copy also transposes (s8 operands that are not K-major)
  int64_t packed_ld;
};

Operand operand(const GemmProblem& p, bool is_a, size_t esz, const void* base) {
  const tc_gemm_desc& d = p.d;
  const bool s8 = esz == 1;
  const int64_t mn = is_a ? d.M : d.N;
  // Stored majorness: A is K-major unless transposed; B is K-major only when transposed.
  const bool stored_mn = is_a ? d.transpose_a : !d.transpose_b;
  Operand o{};
  o.ld = is_a ? d.lda : d.ldb;
  o.stride = is_a ? p.stride_a : p.stride_b;
  const bool batched = p.batch > 1 && o.stride != 0;
  const bool legal = tile::tma_base_ok(base) && tile::tma_pitch_ok(o.ld * esz) &&
                     (!batched || tile::tma_pitch_ok(o.stride * esz));
  o.pack_transpose = s8 && stored_mn;
  // TMA boxes whose rows straddle 128-byte lines load slowly (H200 lab, bf16 4096^3: ld 4104
  // ran 481 TFLOP/s, ld 4097 packed to 128-byte rows 505, ld 4096 784). When many tiles reuse
  // the operand (N for A, M for B), one copy to 128-byte rows pays for itself.
  // TC_WGMMA_PACK128=1 / 0 forces / forbids that copy.
  const char* knob = knobs::get(knobs::kWgmmaPack128);
  const bool pack128 = knob ? std::strcmp(knob, "1") == 0 : (is_a ? d.N : d.M) >= 3072;
  o.pack = !legal || o.pack_transpose || (pack128 && (o.ld * int64_t(esz)) % 128 != 0);
  o.mn_major = stored_mn && !s8;
  o.inner = o.mn_major ? mn : d.K;
  o.outer = o.mn_major ? d.K : mn;
  // 128-byte rows: every TMA box row then starts a 128-byte line (a 16-byte multiple such as
  // 4104 bf16 would split most box rows over two lines).
  const int64_t align_elems = 128 / int64_t(esz);
  o.packed_ld = ceil_div(o.inner, align_elems) * align_elems;
  return o;
}

size_t packed_bytes(const GemmProblem& p, const Operand& o, size_t esz) {
  const int64_t b = (p.batch > 1 && o.stride != 0) ? p.batch : 1;
  return o.pack ? align256(size_t(b * o.outer * o.packed_ld) * esz) : 0;
}

// Explicit (tile, split-K) choices the autotuner may time instead of the heuristic. ksplit:
// in-cluster split-K (gemm_wgmma_ksplit.cuh), 0 = none.
struct WgmmaVariant {
  int bm, bn, splits, cluster, ksplit;
};
// 12..14 (in-cluster split-K) are reachable through TC_WGMMA_VARIANT only: they measured slower
// on every shape tried, so the autotuner is not offered them (gemm_wgmma_variant_count()).
constexpr WgmmaVariant kWgmmaVariants[] = {
    {128, 256, 1, 1, 0}, {128, 128, 1, 1, 0}, {128, 128, 2, 1, 0}, {128, 128, 4, 1, 0},
    {128, 128, 8, 1, 0}, {128, 256, 2, 1, 0}, {128, 256, 4, 1, 0}, {64, 128, 1, 1, 0},
    {64, 64, 1, 1, 0},   {64, 64, 2, 1, 0},   {128, 256, 1, 2, 0}, {128, 128, 1, 1, 2},
    {128, 128, 1, 1, 4}, {64, 128, 1, 1, 2}};

// In-cluster split-K: rank 0's stages must hold the other ranks' BM x BN 4-byte partials.
bool ksplit_fits(int bm, int bn, int ks) {
  const int stage_bytes = (bm + bn) * 128;
  return (ks - 1) * bm * bn * 4 <= wgmma_stages(bm, bn) * stage_bytes;
}

// Tiles the heuristic weighs, with their measured or estimated time per output element of a
// full tile relative to 128 x 256 (BN = 128 cost 1.4x per FLOP in the H200 sweep; the 64-row
// tiles issue m64nN wgmmas from one warpgroup and restage A per 64 rows: estimates, to be
// replaced by the lab's sweep).
struct TileCost {
  int bm, bn;
  double cost;
};
constexpr TileCost kTiles[] = {{128, 256, 1.0}, {128, 128, 1.4}, {64, 128, 2.0}, {64, 64, 3.2}};
// Below 32 k-blocks one consumer warpgroup cannot hide a tile's prologue and epilogue: the
// 64-row tiles cost this much more (H200 sweep, 1000^3: 128 x 128 192.7 TFLOP/s, 64 x 128
// 176.8; with K = 4096 and 8192 the 64-row tiles won by 1.1-1.6x).
constexpr double kShortK64 = 1.45;

// C through TMA stores: beta == 0 (C is never read), one pass (no split-K partials) and a
// TMA-legal C (16-byte base, row and batch pitches). TC_WGMMA_EPILOGUE=direct turns it off
// (=trans_regs too, which also keeps a transposed C on 2-byte register stores).
bool c_tma_ok(const GemmProblem& p, int splits, size_t csz) {
  if (knobs::is(knobs::kWgmmaEpilogue, "direct") || knobs::is(knobs::kWgmmaEpilogue, "trans_regs"))
    return false;
  const tc_gemm_desc& d = p.d;
  return d.beta == 0.0f && splits == 1 && tile::tma_base_ok(p.c) &&
         tile::tma_pitch_ok(d.ldc * csz) &&
         (p.batch == 1 || (p.stride_c != 0 && tile::tma_pitch_ok(p.stride_c * csz)));
}
// A transposed (swapped-operand) C leaves through the epilogue buffer in whole row segments
// when it is 16-bit and not read (gemm_wgmma_epilogue_trans.cuh); TC_WGMMA_EPILOGUE=trans_regs
// keeps the 2-byte register stores (same bits, A/B). The plan's name says so ("_stagedc").
bool staged_c(const tc_gemm_desc& d, size_t csz) {
  return csz == 2 && d.beta == 0.0f && !knobs::is(knobs::kWgmmaEpilogue, "trans_regs");
}
constexpr int kWgmmaVariantCount = int(sizeof(kWgmmaVariants) / sizeof(kWgmmaVariants[0]));
constexpr int kWgmmaTunedVariants = 11;  // the autotuner's: 1..11

// The same product with the operands' roles exchanged, C^T = op(B)^T op(A)^T: A' is B read
// the other way round and B' is A (transposes flipped, pointers, pitches and strides swapped).
// The kernel then writes C' = C^T transposed into C (args.c_trans), so C itself is unchanged.
GemmProblem swapped(const GemmProblem& p) {
  GemmProblem q = p;
  std::swap(q.d.M, q.d.N);
  std::swap(q.a, q.b);
  std::swap(q.d.lda, q.d.ldb);
  std::swap(q.stride_a, q.stride_b);
  q.d.transpose_a = !p.d.transpose_b;
  q.d.transpose_b = !p.d.transpose_a;
  return q;
}

// Tile by estimated time = waves x tile area x per-element cost (kTiles); ties keep the larger
// tile. Wider tiles read less per FLOP, smaller ones put more SMs to work on few tiles.
struct TileChoice {
  int bm = 128, bn = 256;
  double time = 0;
};
TileChoice choose_tile(const GemmProblem& p, const GemmDevice& dev, bool s8) {
  const tc_gemm_desc& d = p.d;
  TileChoice best;
  for (const TileCost& tc : kTiles) {
    if (tc.bm == 64 && s8) continue;
    const int64_t u = p.batch * ceil_div(d.M, tc.bm) * ceil_div(d.N, tc.bn);
    const double cost = tc.cost * (tc.bm == 64 && d.K < 2048 ? kShortK64 : 1.0);
    const double t = double(ceil_div(u, dev.sm_count)) * tc.bm * tc.bn * cost;
    if (best.time == 0 || t < best.time) best = {tc.bm, tc.bn, t};
  }
  return best;
}

// Dispatch on the operands' majorness (ta: A M-major, tb: B N-major) to the instance files.
template <class T>
cudaError_t launch_typed(int ta, int tb, const GemmPlan& plan, const WgmmaMaps& maps,
                         const WgmmaArgs& args, cudaStream_t stream) {
  if (ta)
    return tb ? launch_wgmma_tiles<T, 1, 1>(plan.bm, plan.bn, plan.cluster, maps, args, plan.grid,
                                            stream)
              : launch_wgmma_tiles<T, 1, 0>(plan.bm, plan.bn, plan.cluster, maps, args, plan.grid,
                                            stream);
  return tb ? launch_wgmma_tiles<T, 0, 1>(plan.bm, plan.bn, plan.cluster, maps, args, plan.grid,
                                          stream)
            : launch_wgmma_tiles<T, 0, 0>(plan.bm, plan.bn, plan.cluster, maps, args, plan.grid,
                                          stream);
}

bool env_flag(knobs::Id knob) {
  return knobs::is(knob, "1");
}

}  // namespace

int gemm_wgmma_variant_count() {
  return kWgmmaTunedVariants;
}

bool plan_gemm_wgmma(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan,
                     std::string& why) {
  const tc_gemm_desc& d = p.d;
  if (dev.cc_major != 9 || dev.cc_minor != 0) {
    why = "wgmma/TMA kernels are built for sm_90a only";
    return false;
  }
  const bool f16 = d.a_dtype == TC_DTYPE_F16 && d.b_dtype == TC_DTYPE_F16 &&
                   (d.c_dtype == TC_DTYPE_F16 || d.c_dtype == TC_DTYPE_F32);
  const bool bf16 = d.a_dtype == TC_DTYPE_BF16 && d.b_dtype == TC_DTYPE_BF16 &&
                    (d.c_dtype == TC_DTYPE_BF16 || d.c_dtype == TC_DTYPE_F32);
  const bool s8 = d.a_dtype == TC_DTYPE_I8 && d.b_dtype == TC_DTYPE_I8 &&
                  d.c_dtype == TC_DTYPE_I32 && d.alpha == 1.0f &&
                  (d.beta == 0.0f || d.beta == 1.0f);
  if (!(((f16 || bf16) && d.accum_dtype == TC_DTYPE_F32) ||
        (s8 && d.accum_dtype == TC_DTYPE_I32))) {
    why = "dtype combination not served by the wgmma kernels";
    return false;
  }
  if (!tile::tma_encoder()) {
    why = "the driver has no cuTensorMapEncodeTiled";
    return false;
  }
  const size_t esz = s8 ? 1 : 2;
  const size_t csz = d.c_dtype == TC_DTYPE_F16 || d.c_dtype == TC_DTYPE_BF16 ? 2 : 4;
  // Orientation: the swapped problem (C^T = B^T A^T, written back transposed by the register
  // epilogue) when it needs fewer waves, e.g. 4095x4097x4099 on 128x256 tiles: 32 x 17 = 544
  // tiles (4.12 waves: 5 rounds; the 17th tile column holds one column) against 33 x 16 = 528
  // (exactly 4). Only where C takes the register epilogue anyway (TMA-illegal C or beta != 0)
  // and without split-K; not for the autotuner's fixed variants. TC_WGMMA_SWAP=1 / 0 forces /
  // forbids it (tests, lab A/B).
  const char* swap_knob = knobs::get(knobs::kWgmmaSwap);
  // TC_WGMMA_VARIANT=n stands in for p.variant 0 (tests and lab A/B of a fixed variant).
  int variant = p.variant;
  if (const char* fv = knobs::get(knobs::kWgmmaVariant); variant == 0 && fv)
    variant = std::clamp(std::atoi(fv), 0, kWgmmaVariantCount);
  const bool swap_ok = variant == 0 && !c_tma_ok(p, 1, csz);
  TileChoice tile = choose_tile(p, dev, s8);
  bool swap = false;
  if (swap_ok && !(swap_knob && std::strcmp(swap_knob, "0") == 0)) {
    const TileChoice t2 = choose_tile(swapped(p), dev, s8);
    swap = (swap_knob && std::strcmp(swap_knob, "1") == 0) || t2.time < tile.time;
    if (swap) tile = t2;
  }
  const GemmProblem ps = swap ? swapped(p) : GemmProblem{};
  const GemmProblem& q = swap ? ps : p;
  const Operand a = operand(q, true, esz, q.a), b = operand(q, false, esz, q.b);

  int bm = 128, bn = 256, cluster = 1;
  if (!env_flag(knobs::kUse128Tile)) {
    bm = tile.bm;
    bn = tile.bn;
  }
  auto units_of = [&](int tbm, int tbn) {
    return p.batch * ceil_div(q.d.M, tbm) * ceil_div(q.d.N, tbn);
  };
  int64_t units = units_of(bm, bn);
  const int64_t kb_total = ceil_div(d.K, int64_t(128 / esz));
  int64_t splits = 1;
  int ks = 1;  // in-cluster split-K
  // Split-K only when a quarter of the SMs or fewer would have work, and by 2: the sweep found
  // 127x4096x4096 best at 2 splits (185 vs 170 TFLOP/s unsplit, 167 at 4), while 64 tiles of
  // 8192x128x8192 lost to the partial-sum traffic (324 at 2 splits vs 376 unsplit).
  if (units * 4 <= dev.sm_count && kb_total >= 32 && !swap) splits = 2;
  // In-cluster split-K by 2 where the tiles fill at most half of the SMs (1000^3: 64 tiles of
  // 128 x 128 -> 128 CTAs of 8 k-blocks), in place of the global split: only with
  // TC_WGMMA_CLUSTER_SPLITK=1. It measured slower on every shape tried (H200, 22:12 UTC: 1000^3
  // 190 -> 153 TFLOP/s; docs/gemm.md, round 7). 16-bit only (int8 routes its 128 x 128 tile to
  // a kernel of its own).
  const char* ck_knob = knobs::get(knobs::kWgmmaClusterSplitk);
  if (ck_knob && std::strcmp(ck_knob, "1") == 0 && !s8 && !swap && units * 2 <= dev.sm_count &&
      kb_total >= 8 && ksplit_fits(bm, bn, 2)) {
    splits = 1;
    ks = 2;
  }
  if (variant > 0) {  // the autotuner's explicit choice (see kWgmmaVariants)
    const WgmmaVariant& v = kWgmmaVariants[(variant - 1) % kWgmmaVariantCount];
    bm = s8 ? 128 : v.bm;
    bn = s8 && v.bm == 64 ? 128 : v.bn;
    cluster = v.cluster;
    units = units_of(bm, bn);
    splits = std::min<int64_t>(v.splits, kb_total);
    // int8 keeps its own 128 x 128 routing (gemm_wgmma_s8.cu's ping-pong kernel does not
    // know args.ksplit): its variants 12..14 run unsplit.
    ks = v.ksplit > 1 && !s8 && ksplit_fits(bm, bn, v.ksplit) ? v.ksplit : 1;
  }
  if (ks > 1) {  // encoded as cluster == splits == ks (see launch_gemm_wgmma)
    splits = ks;
    cluster = ks;
  } else if (splits > 1) {  // no empty split
    const int64_t per = ceil_div(kb_total, splits);
    splits = ceil_div(kb_total, per);
  }

  // int8: the ping-pong kernel's 128 x 128 tiles in place of the cooperative 128 x 256 where
  // every CTA gets two tiles or more (gemm_wgmma_s8_pingpong.cuh; H200 22:11 UTC: 4096^3 1244 ->
  // 1321 TOP/s, 8192^3 1306 -> 1318; TC_S8_PINGPONG=0: never).
  if (s8 && variant == 0 && bn == 256 && cluster == 1 && splits == 1 &&
      !env_flag(knobs::kUse128Tile)) {
    const int64_t u128 = units_of(128, 128);
    if (s8_pingpong_wanted(u128, int(std::min<int64_t>(u128, dev.sm_count)))) {
      bn = 128;
      units = u128;
    }
  }
  plan->bm = bm;
  plan->cluster = cluster;
  plan->bn = bn;
  plan->stages = wgmma_stages(bm, bn);
  plan->splits = int(splits);
  plan->swap_ab = swap;
  plan->pack_a = a.pack;
  plan->pack_b = b.pack;
  plan->grid = int(std::min<int64_t>(units * splits, dev.sm_count));
  if (ks > 1) {
    plan->grid = int(units * ks);  // not persistent: one tile per cluster
  } else if (cluster == 2) {       // pairs of vertically adjacent tiles, an even grid
    const int64_t pairs =
        p.batch * splits * ceil_div(ceil_div(q.d.M, 128), 2) * ceil_div(q.d.N, bn);
    plan->grid = 2 * int(std::min<int64_t>(pairs, dev.sm_count / 2));
  }
  // The launcher's own test (gemm_wgmma_s8.cu, s8_pingpong_for), so that the name says where
  // the ping-pong kernel runs, the autotuner's 128 x 128 variants included.
  const bool pingpong =
      s8 && bn == 128 && cluster == 1 && ks == 1 && s8_pingpong_wanted(units * splits, plan->grid);
  plan->workspace_bytes = packed_bytes(p, a, esz) + packed_bytes(p, b, esz) +
                          (splits > 1 && ks == 1 ? size_t(p.batch) * splits * d.M * d.N * 4 : 0);
  const char* t = s8 ? "s8_s32" : (f16 ? "f16_f32" : "bf16_f32");
  plan->name = std::string("gemm_wgmma_") + t + "_" + (q.d.transpose_a ? "t" : "n") +
               (q.d.transpose_b ? "t" : "n") + "_bm" + std::to_string(bm) + "_bn" +
               std::to_string(bn) + "_bk" + std::to_string(128 / esz) + "_s" +
               std::to_string(plan->stages) + (a.pack || b.pack ? "_packed" : "_aligned") +
               (ks > 1       ? "_clsplitk" + std::to_string(ks)
                : splits > 1 ? "_splitk" + std::to_string(splits)
                             : "") +
               (cluster == 2 && ks == 1 ? "_mcast2" : "") + (swap ? "_swapab" : "") +
               (swap && staged_c(d, csz) ? "_stagedc" : "") + (pingpong ? "_pingpong" : "");
  return true;
}

tc_status_t launch_gemm_wgmma(const GemmProblem& p0, const GemmPlan& plan0, void* workspace) {
  // In-cluster split-K is planned as cluster == splits == ks (GemmPlan has no field of its
  // own): the kernel runs unsplit units (no partials in the workspace) in clusters of ks CTAs.
  const int ks = plan0.cluster > 1 && plan0.splits == plan0.cluster ? plan0.cluster : 1;
  GemmPlan plan = plan0;
  if (ks > 1) {
    plan.splits = 1;
    plan.cluster = 1;
  }
  // A swapped plan (C^T = B^T A^T) runs the swapped problem and writes C' transposed.
  const GemmProblem ps = plan.swap_ab ? swapped(p0) : GemmProblem{};
  const GemmProblem& p = plan.swap_ab ? ps : p0;
  const tc_gemm_desc& d = p.d;
  const bool s8 = d.a_dtype == TC_DTYPE_I8;
  const size_t esz = s8 ? 1 : 2;
  auto stream = static_cast<cudaStream_t>(p.stream);
  Operand a = operand(p, true, esz, p.a), b = operand(p, false, esz, p.b);
  // The plan must have been made for these pointers (alignment decides packing).
  const size_t need = packed_bytes(p, a, esz) + packed_bytes(p, b, esz) +
                      (plan.splits > 1 ? size_t(p.batch) * plan.splits * d.M * d.N * 4 : 0);
  if (need > plan.workspace_bytes || (need > 0 && workspace == nullptr)) return TC_ERROR_INTERNAL;
  char* ws = static_cast<char*>(workspace);
  const void* base[2] = {p.a, p.b};
  Operand* ops[2] = {&a, &b};
  // 16-bit re-pitching copies may go to the vectorized kernel, both operands in one launch
  // (gemm_pack_vec.cu), instead of the element-gathering kernel per operand (gemm_pack.cu, ~17.5
  // us per 34 MB operand on the H200, ~3.9 TB/s). Off by default: on the H200 (22:12 UTC) it made
  // 4095x4097x4099 slower, 548 -> 508 TFLOP/s (docs/gemm.md, round 7); a third, warp-per-row
  // copy in one launch lost too (00:34 UTC, 553 -> 540; docs/gemm.md, round 8).
  // TC_WGMMA_PACK=vec turns the vectorized copy on.
  const char* pack_knob = knobs::get(knobs::kWgmmaPack);
  const bool vec = !s8 && pack_knob && std::strcmp(pack_knob, "vec") == 0;
  PackCopy copies[2];
  int n_copies = 0;
  for (int i = 0; i < 2; ++i) {
    Operand& o = *ops[i];
    if (!o.pack) continue;
    const int nb = (p.batch > 1 && o.stride != 0) ? p.batch : 1;
    // Source element (r, c) of the packed (outer x inner) matrix.
    const long long sr = o.pack_transpose ? 1 : o.ld, sc = o.pack_transpose ? o.ld : 1;
    if (vec && !o.pack_transpose)
      copies[n_copies++] = {base[i], ws, nb, o.stride, o.outer, o.inner, sr, o.packed_ld};
    else if (launch_pack(base[i], ws, int(esz), nb, o.stride, int(o.outer), int(o.inner), sr, sc,
                         o.packed_ld, stream) != cudaSuccess)
      return TC_ERROR_BACKEND_FAILURE;
    base[i] = ws;
    o.ld = o.packed_ld;
    o.stride = o.stride != 0 ? o.outer * o.packed_ld : 0;
    ws += packed_bytes(p, o, esz);
  }
  if (n_copies > 0) {
    cudaError_t pe = launch_pack_vec(copies, n_copies, stream);
    if (pe == cudaErrorInvalidValue) {  // beyond its 32-bit indexing: the old kernel, per copy
      (void)cudaGetLastError();
      pe = cudaSuccess;
      for (int i = 0; i < n_copies && pe == cudaSuccess; ++i) {
        const PackCopy& c = copies[i];
        pe = launch_pack(c.src, c.dst, 2, c.batch, c.src_batch, int(c.rows), int(c.cols), c.sr, 1,
                         c.ld, stream);
      }
    }
    if (pe != cudaSuccess) return TC_ERROR_BACKEND_FAILURE;
  }
  WgmmaMaps maps{};
  tile::TmaMap* map[2] = {&maps.a, &maps.b};
  const int box_k = int(128 / esz);
  for (int i = 0; i < 2; ++i) {
    const Operand& o = *ops[i];
    const bool batched = p.batch > 1 && o.stride != 0;
    // K-major B in CTA pairs: each CTA loads (and multicasts) half of the tile's rows.
    const uint32_t box_outer =
        o.mn_major ? 64 : (i == 0 ? plan.bm : (plan.cluster == 2 ? plan.bn / 2 : plan.bn));
    const uint32_t box_inner = o.mn_major ? 64 : box_k;
    if (!tile::tma_encode_3d(map[i], base[i], uint32_t(esz), o.inner, o.outer,
                             batched ? p.batch : 1, o.ld * esz, batched ? o.stride * esz : 0,
                             box_inner, box_outer))
      return TC_ERROR_BACKEND_FAILURE;
  }
  WgmmaArgs args{};
  args.M = d.M;
  args.N = d.N;
  args.K = d.K;
  args.batch = p.batch;
  args.tiles_m = int(ceil_div(d.M, plan.bm));
  args.tiles_n = int(ceil_div(d.N, plan.bn));
  args.kb_total = int(ceil_div(d.K, 128 / int64_t(esz)));
  args.kb_per_split = int(ceil_div(args.kb_total, ks > 1 ? ks : plan.splits));
  args.ksplit = ks;
  args.splits = plan.splits;
  args.a_bcast = p.batch > 1 && p.stride_a == 0;
  args.b_bcast = p.batch > 1 && p.stride_b == 0;
  args.alpha = d.alpha;
  args.beta = d.beta;
  args.c = p.c;
  args.ldc = d.ldc;
  args.stride_c = p.stride_c;
  args.c_type = d.c_dtype == TC_DTYPE_F32   ? CType::f32
                : d.c_dtype == TC_DTYPE_F16 ? CType::f16
                : d.c_dtype == TC_DTYPE_I32 ? CType::i32
                                            : CType::bf16;
  const size_t csz = d.c_dtype == TC_DTYPE_F16 || d.c_dtype == TC_DTYPE_BF16 ? 2 : 4;
  args.c_trans = plan.swap_ab;
  // A transposed 16-bit C with beta == 0 leaves through the epilogue buffer in whole row
  // segments (gemm_wgmma_epilogue_trans.cuh); TC_WGMMA_EPILOGUE=trans_regs keeps the 2-byte
  // register stores of earlier sessions (same bits, A/B).
  args.c_stage = plan.swap_ab && staged_c(d, csz);
  args.c_vec2 = !plan.swap_ab && d.ldc % 2 == 0 && (p.batch == 1 || p.stride_c % 2 == 0) &&
                reinterpret_cast<uintptr_t>(p.c) % (2 * csz) == 0;
  args.partial = plan.splits > 1 ? ws : nullptr;
  // C box: 64 rows (one consumer's block) x 128 bytes; a failed encode keeps direct stores.
  // The map stops at the last 16-byte boundary of a row (args.n_tma): TMA stores write whole
  // 16-byte chunks, and the chunk holding a ragged row end would reach into C's padding.
  const bool c_batched = p.batch > 1;
  args.n_tma = wgmma_tma_cols(d.N, int(csz));
  args.tma_store = !plan.swap_ab && args.n_tma > 0 && c_tma_ok(p, plan.splits, csz) &&
                   tile::tma_encode_3d(&maps.c, p.c, uint32_t(csz), uint64_t(args.n_tma),
                                       uint64_t(d.M), c_batched ? p.batch : 1, d.ldc * csz,
                                       c_batched ? p.stride_c * csz : 0, uint32_t(128 / csz), 64);

  cudaError_t e;
  const int ta = a.mn_major, tb = b.mn_major;
  if (s8)
    e = launch_wgmma_tiles<tile::i8, 0, 0>(plan.bm, plan.bn, plan.cluster, maps, args, plan.grid,
                                           stream);
  else if (d.a_dtype == TC_DTYPE_F16)
    e = launch_typed<tile::f16>(ta, tb, plan, maps, args, stream);
  else
    e = launch_typed<tile::bf16>(ta, tb, plan, maps, args, stream);
  if (e == cudaSuccess && plan.splits > 1) e = launch_splitk_reduce(args, stream);
  return e == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

}  // namespace tc::cuda
