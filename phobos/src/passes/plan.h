// Lowering plan for the GPU: where each tile lives and how `acc += dot(a, b)` is computed.
//
// This is the second IR level (printed by `phobosc emit --target=plan`) and the single source of
// truth for candidate validity: a candidate whose plan has an error (a tile that does not divide
// among the threads, too many registers, too much shared memory, a tensor-core tile that does
// not fit m16n8k16) is skipped by the autotuner on every target, so a cached choice is valid on
// every target.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "../ir.h"

namespace phobos::passes {

// How a 2-D register tile [R, C] is spread over the threads of a block.
struct Layout {
  enum Kind { Simt, Mma, Wgmma } kind = Simt;
  int64_t R = 0, C = 0;
  // Simt: thread (ty, tx) = (tid / tc, tid % tc) owns rows ty + i*tr and, in groups of gc
  // adjacent columns, columns tx*gc + (j % gc) + (j / gc)*tc*gc (gc = 4 lets an f32 dot read
  // its B row as float4s; gc = 1 is the plain cyclic layout).
  int64_t tr = 1, tc = 1, gc = 1;
  // Mma (m16n8k16): warps wm x wn; each warp owns mi x ni mma tiles of 16 x 8.
  int64_t wm = 1, wn = 1, mi = 1, ni = 1;
  // Wgmma (sm_90a, m64nCk16): warpgroup g owns rows 64 g .. 64 g + 63 and all C columns.
  int64_t per_thread() const {
    return kind == Simt ? (R / tr) * (C / tc) : kind == Mma ? mi * ni * 4 : C / 2;
  }
};

struct DotSite {
  const ir::Stmt* def = nullptr;  // `%acc = (%acc + dot(%a, %b))`
  int acc = -1, a = -1, b = -1;
  bool trans = false;
  bool mma = false;
  const ir::Stmt* loop = nullptr;  // the enclosing for, if any
  bool pipelined = false;          // operands double-buffered (@pipeline)
};

struct Plan {
  std::string error;         // non-empty: this instance cannot be lowered, and why
  bool unsupported = false;  // the error is a construct the GPU target lacks, not a resource limit
  int64_t threads = 0;
  std::map<int, Layout> frag;     // registers held in registers, by layout
  std::set<int> smem;             // registers staged in shared memory
  std::set<int> double_buffered;  // pipelined operands: `stages` copies in shared memory
  // @pipeline with cp.async: when every pipelined operand is a plain slice of a tensor of its
  // own element type whose rows are whole 16-byte chunks, the copies go global -> shared
  // asynchronously, `stages` - 1 steps ahead (4 stages when shared memory allows, else 3);
  // otherwise the next step is staged through registers, 2 stages.
  bool async_copy = false;
  int64_t stages = 2;
  // Row pitch (elements) of 2-D shared tiles; absent = the tile's width. Tensor-core operands
  // get 8 elements (16 bytes) of padding so ldmatrix's eight row reads hit distinct banks.
  std::map<int, int64_t> pitch;
  // 128-byte-swizzled shared tiles read by wgmma (sm_90a): 1 = K-major [rows][64] (A, and B of
  // dot_t), 2 = N-major [64][N] in 64-column atoms (B of dot). 1024-byte aligned, no padding.
  std::map<int, int> swizzle;
  bool wgmma = false;
  // Warp-specialized TMA form (sm_90a, docs/phobos.md "@pipeline"): the loop's two operands are
  // loaded by TMA (128-byte swizzle) into an mbarrier ring of `stages` stages by one extra
  // producer warpgroup (threads T .. T + 127, launched beyond @launch's T); the T consumer
  // threads run the kernel body with the loop's wgmma batches overlapped; the grid is
  // persistent (one CTA per SM walking the logical grid). Needs tensor maps at launch, so
  // cuda_launch falls back to plan_kernel(k, arch, false) where TMA is not legal.
  struct TmaOperand {
    int reg = -1, arg = -1;  // the shared tile and the tensor argument it is sliced from
    int kind = 1;            // 1: one box {64, rows} (K-major); 2: cols / 64 boxes {64, 64}
    int64_t rows = 0, cols = 0;
  };
  bool ws = false;
  const ir::Stmt* ws_loop = nullptr;
  std::vector<TmaOperand> tma;
  int64_t bar_offset = 0;  // ws: full[stages] then empty[stages] mbarriers
  int64_t pitch_of(const ir::Kernel& k, int r) const {
    auto it = pitch.find(r);
    const auto& s = k.regs[r].type.shape;
    return it != pitch.end() ? it->second : s.empty() ? 1 : s.back();
  }
  int64_t smem_elems(const ir::Kernel& k, int r) const {  // one stage
    const auto& s = k.regs[r].type.shape;
    return s.size() == 2 ? s[0] * pitch_of(k, r) : k.regs[r].type.numel();
  }
  std::vector<DotSite> dots;
  int64_t smem_bytes = 0;
  int64_t regs_per_thread = 0;
  std::set<int> unchecked_dims;  // edge checks dropped (@aligned)
};

constexpr int64_t kMaxSmemBytes = 227 * 1024;  // sm_90 opt-in shared memory per block
constexpr int64_t kMaxTileRegs = 160;          // 32-bit tile values per thread (of 255 registers)

// arch: the target's compute capability (90 = sm_90a, where @tensorcore may use wgmma).
// tma = false: never the warp-specialized TMA form (a launch whose tensors TMA cannot address).
Plan plan_kernel(const ir::Kernel& k, int arch = 90, bool tma = true);
std::string print_plan(const ir::Kernel& k, const Plan& p);
// Byte offsets of the shared tiles (in p.smem order) and the total, with `stages` copies of the
// pipelined ones; swizzled tiles are 1024-byte aligned (the total then has 1024 bytes of slack
// for aligning the dynamic shared base); the ws form's mbarriers follow at offsets[-1]. The
// emitter lays shared memory out with this.
int64_t smem_layout(const ir::Kernel& k, const Plan& p, int64_t stages,
                    std::map<int, int64_t>* offsets);

}  // namespace phobos::passes
