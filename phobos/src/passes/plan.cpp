// Passes from the tile IR to the GPU plan: dot-site discovery, pipeline planning (@pipeline),
// tensor-core lowering (@tensorcore), storage assignment and resource checks.
#include "plan.h"

#include <cstdlib>
#include <functional>

#include "../build.h"

namespace phobos::passes {

using namespace ir;

int64_t smem_layout(const ir::Kernel& k, const Plan& p, int64_t stages,
                    std::map<int, int64_t>* offsets) {
  int64_t off = 0;
  for (int r : p.smem) {
    int64_t align = p.swizzle.count(r) ? 1024 : 16;
    off = (off + align - 1) / align * align;
    if (offsets) (*offsets)[r] = off;
    int64_t bytes = p.smem_elems(k, r) * static_cast<int64_t>(dtype_size(k.regs[r].type.dt));
    off += bytes * (p.double_buffered.count(r) ? stages : 1);
  }
  if (p.ws) {  // full[stages], empty[stages]
    off = (off + 7) / 8 * 8;
    if (offsets) (*offsets)[-1] = off;
    off += 16 * stages;
  }
  off = (off + 15) / 16 * 16;
  return p.swizzle.empty() ? off : off + 1024;  // slack to align the dynamic base to 1024
}

static std::string shape(int64_t r, int64_t c) {
  return "[" + std::to_string(r) + ", " + std::to_string(c) + "]";
}

// Square-ish per-thread blocks keep the inner product's loads per FMA low.
static bool simt_layout(int64_t R, int64_t C, int64_t T, Layout* out) {
  bool found = false;
  int64_t best = 0;
  for (int64_t tc = 1; tc <= T; tc *= 2) {
    if (T % tc || C % tc) continue;
    int64_t tr = T / tc;
    if (R % tr) continue;
    int64_t score = std::llabs(R / tr - C / tc);
    if (!found || score < best) {
      found = true;
      best = score;
      *out = Layout{Layout::Simt, R, C, tr, tc, C % (tc * 4) == 0 ? 4 : 1};
    }
  }
  return found;
}

static std::string mma_layout(int64_t R, int64_t C, int64_t K, int64_t T, Layout* out) {
  if (R % 16 || C % 8 || K % 16)
    return "a tensor-core tile needs rows % 16, columns % 8 and depth % 16 == 0; dot is " +
           shape(R, K) + " x " + shape(K, C);
  int64_t warps = T / 32;
  bool found = false;
  int64_t best = 0;
  for (int64_t wn = 1; wn <= warps; wn *= 2) {
    if (warps % wn) continue;
    int64_t wm = warps / wn;
    if (R % (wm * 16) || C % (wn * 8)) continue;
    Layout l{Layout::Mma, R, C};
    l.wm = wm;
    l.wn = wn;
    l.mi = R / (wm * 16);
    l.ni = C / (wn * 8);
    int64_t score = std::llabs(l.mi * 16 - l.ni * 8);
    if (!found || score < best) {
      found = true;
      best = score;
      *out = l;
    }
  }
  if (!found)
    return "the " + shape(R, C) + " accumulator does not split into m16n8 tiles over " +
           std::to_string(warps) + " warps";
  return {};
}

// A tile filled by a plain 2-D slice of a tensor of its own element type, rows in whole 16-byte
// chunks (the emitter's vector fill; cp.async can move it).
static bool plain_chunked_load(const ir::Kernel& k, int reg, const NodeP& v, int64_t pitch) {
  const VType& t = k.regs[reg].type;
  if (t.shape.size() != 2 || v->op != Op::Load || v->idx < 0 || v->type.dt != t.dt) return false;
  int tiled = 0;
  for (auto& s : v->slices) tiled += !s.point;
  if (tiled != 2 || v->slices.back().point) return false;
  int64_t V = 16 / static_cast<int64_t>(dtype_size(t.dt));
  return V >= 2 && t.shape[1] % V == 0 && pitch % V == 0;
}

// The register a Def's value is loaded from (`load X[...]` or a cast of it), or -1.
static const Node* tensor_load(const NodeP& v) {
  if (v->op == Op::Load && v->idx >= 0) return v.get();
  if (v->op == Op::Cast && v->args[0]->op == Op::Load && v->args[0]->idx >= 0)
    return v->args[0].get();
  return nullptr;
}

// wgmma (sm_90a) serves `acc += dot/dot_t(a, b)` when one warpgroup per 64 accumulator rows
// covers the tile (R = 64 * threads / 128), the width is an m64nNk16 shape the tile library
// has (64, 128, 256) and a K step is exactly one 128-byte swizzle atom (BK = 64 for 16-bit).
// PHOBOS_WGMMA=0 turns the form off (mma.sync everywhere), for comparing the two paths.
static bool wgmma_fits(int64_t R, int64_t C, int64_t K, int64_t T) {
  static const bool off = [] {
    const char* e = std::getenv("PHOBOS_WGMMA");
    return e && std::string(e) == "0";
  }();
  return !off && T % 128 == 0 && R == 64 * (T / 128) && (C == 64 || C == 128 || C == 256) &&
         K == 64;
}

// An expression TMA's producer thread can evaluate on its own: constants, block indices, grid,
// dimension symbols, scalar parameters and the loop variable `loop_var`, no tensor reads.
static bool producer_pure(const NodeP& n, int loop_var) {
  bool ok = true;
  walk_node(n, [&](const Node& x) {
    if (x.op == Op::Load || (x.op == Op::Reg && x.idx != loop_var) || x.op == Op::Dot ||
        x.op == Op::DotT || x.op == Op::Reduce || (x.op == Op::Ctx && x.idx / 3 == 1))
      ok = false;
  });
  return ok;
}

// The warp-specialized TMA form (see Plan::ws): one wgmma dot in a top-level pipelined loop
// whose body is exactly `a = X[..]`, `b = Y[..]`, `acc += dot(a, b)`, the operands plain 2-D
// slices of 16-bit rank-2 tensors at producer-pure starts, one or two consumer warpgroups.
static bool plan_ws(const ir::Kernel& k, Plan& p) {
  const char* env = std::getenv("PHOBOS_TMA");  // read per plan: tests compare both forms
  if ((env && std::string(env) == "0") || !p.wgmma || !p.async_copy || p.dots.size() != 1 ||
      k.threads > 256)
    return false;
  const DotSite& d = p.dots[0];
  if (!d.pipelined || !d.loop || d.loop->body.size() != 3) return false;
  bool top = false;
  for (auto& s : k.body) top |= &s == d.loop;
  if (!top) return false;
  const Stmt& loop = *d.loop;
  for (auto* e : {&loop.lo, &loop.hi, &loop.step})
    if (!producer_pure(*e, loop.reg)) return false;
  std::vector<Plan::TmaOperand> ops;
  for (int r : {d.a, d.b}) {
    const Stmt* def = nullptr;
    for (auto& s : loop.body)
      if (s.kind == Stmt::Def && s.reg == r) def = &s;
    if (!def || def->value->op != Op::Load || def->value->idx < 0) return false;
    const Node& v = *def->value;
    const ir::Arg& a = k.args[v.idx];
    if (a.dims.size() != 2 || v.slices.size() != 2 || v.slices[0].point || v.slices[1].point ||
        dtype_size(a.dt) != 2 || a.dt != k.regs[r].type.dt)
      return false;
    for (auto& sl : v.slices)
      if (!producer_pure(sl.start, loop.reg)) return false;
    Plan::TmaOperand t;
    t.reg = r;
    t.arg = v.idx;
    t.kind = p.swizzle.at(r);
    t.rows = k.regs[r].type.shape[0];
    t.cols = k.regs[r].type.shape[1];
    if (t.kind == 1 && (t.cols != 64 || t.rows > 256)) return false;
    if (t.kind == 2 && (t.rows != 64 || t.cols % 64)) return false;
    ops.push_back(t);
  }
  p.ws = true;
  p.ws_loop = d.loop;
  p.tma = ops;
  return true;
}

Plan plan_kernel(const ir::Kernel& k, int arch, bool tma) {
  Plan p;
  p.threads = k.threads;
  std::map<int, const Stmt*> def_of;
  std::map<int, const Stmt*> def_loop;
  // 1. Dot sites: `%acc = (%acc + dot(%a, %b))` with operands in registers.
  std::function<void(const std::vector<Stmt>&, const Stmt*)> scan =
      [&](const std::vector<Stmt>& body, const Stmt* loop) {
        for (auto& s : body) {
          if (s.kind == Stmt::Def) {
            def_of[s.reg] = &s;
            def_loop[s.reg] = loop;
            const NodeP& v = s.value;
            if (v->op == Op::Add && v->args[0]->op == Op::Reg && v->args[0]->idx == s.reg &&
                (v->args[1]->op == Op::Dot || v->args[1]->op == Op::DotT) &&
                v->args[1]->args[0]->op == Op::Reg && v->args[1]->args[1]->op == Op::Reg) {
              DotSite d;
              d.def = &s;
              d.acc = s.reg;
              d.a = v->args[1]->args[0]->idx;
              d.b = v->args[1]->args[1]->idx;
              d.trans = v->args[1]->op == Op::DotT;
              d.loop = loop;
              p.dots.push_back(d);
              continue;
            }
          }
          bool bad = false;
          for (auto* n : {&s.value, &s.cond})
            walk_node(*n, [&](const Node& x) { bad |= x.op == Op::Dot || x.op == Op::DotT; });
          if (bad && p.error.empty()) p.unsupported = true;
          if (bad && p.error.empty())
            p.error =
                "the GPU target lowers dot/dot_t only in the form 'acc += dot(a, b)' with "
                "a and b held in variables (line " +
                std::to_string(s.loc.line) + ")";
          bool red = false;
          for (auto* n : {&s.value, &s.cond})
            walk_node(*n, [&](const Node& x) {
              red |= x.op == Op::Reduce || (x.op == Op::Load && x.idx < 0);
            });
          if (red && p.error.empty()) p.unsupported = true;
          if (red && p.error.empty())
            p.error = "the GPU target does not yet lower reductions or slices of tiles (line " +
                      std::to_string(s.loc.line) + ")";
          scan(s.body, s.kind == Stmt::For ? &s : loop);
          scan(s.else_body, loop);
        }
      };
  scan(k.body, nullptr);
  if (!p.error.empty()) return p;
  // 2. Accumulator layouts: tensor cores for f16/bf16 operands under @tensorcore.
  for (auto& d : p.dots) {
    const VType& at = k.regs[d.a].type;
    const VType& ct = k.regs[d.acc].type;
    int64_t R = ct.shape[0], C = ct.shape[1], K = at.shape[1];
    p.smem.insert(d.a);
    p.smem.insert(d.b);
    Layout l;
    bool mma_types = (at.dt == DType::F16 || at.dt == DType::BF16) && ct.dt == DType::F32;
    if (k.tensorcore && mma_types && arch == 90 && wgmma_fits(R, C, K, k.threads)) {
      l = Layout{Layout::Wgmma, R, C};
      d.mma = true;
      p.wgmma = true;
      p.swizzle[d.a] = 1;
      p.swizzle[d.b] = d.trans ? 1 : 2;
    } else if (k.tensorcore && mma_types) {
      std::string why = mma_layout(R, C, K, k.threads, &l);
      if (!why.empty()) {
        p.error = why;
        return p;
      }
      d.mma = true;
      p.pitch[d.a] = at.shape[1] + 8;
      p.pitch[d.b] = k.regs[d.b].type.shape[1] + 8;
    } else if (!simt_layout(R, C, k.threads, &l)) {
      p.error = "the accumulator tile " + shape(R, C) + " does not divide among " +
                std::to_string(k.threads) + " threads";
      return p;
    }
    auto old = p.frag.find(d.acc);
    if (old != p.frag.end() && old->second.kind != l.kind) {
      p.error = "one accumulator is used by both tensor-core and SIMT dots";
      return p;
    }
    p.frag[d.acc] = l;
    // @pipeline: operands loaded from tensors inside the same loop are double-buffered.
    if (k.pipeline && d.loop && def_loop[d.a] == d.loop && def_loop[d.b] == d.loop &&
        tensor_load(def_of[d.a]->value) && tensor_load(def_of[d.b]->value)) {
      d.pipelined = true;
      p.double_buffered.insert(d.a);
      p.double_buffered.insert(d.b);
    }
  }
  // 2b. cp.async pipelining (see Plan::async_copy).
  bool any_piped = false, all_plain = true;
  for (auto& d : p.dots) {
    if (!d.pipelined) continue;
    any_piped = true;
    for (int r : {d.a, d.b})
      all_plain &= plain_chunked_load(k, r, def_of[r]->value, p.pitch_of(k, r));
  }
  p.async_copy = any_piped && all_plain;
  if (tma && arch == 90) plan_ws(k, p);
  // 3. Every other tile register: 2-D tiles take the layout of a same-shaped accumulator (so
  //    the epilogue is thread-local), else a SIMT layout; 1-D and broadcast tiles are shared.
  for (size_t r = 0; r < k.regs.size(); ++r) {
    const VType& t = k.regs[r].type;
    int ri = static_cast<int>(r);
    if (t.scalar() || p.frag.count(ri) || p.smem.count(ri)) continue;
    if (t.shape.size() == 1 || t.shape[0] == 1 || t.shape[1] == 1) {
      p.smem.insert(ri);
      continue;
    }
    bool done = false;
    for (auto& [acc, l] : p.frag)
      if (!done && l.R == t.shape[0] && l.C == t.shape[1]) {
        p.frag[ri] = l;
        done = true;
      }
    if (done) continue;
    Layout l;
    if (!simt_layout(t.shape[0], t.shape[1], k.threads, &l)) {
      p.error = "tile %" + k.regs[r].name + " " + shape(t.shape[0], t.shape[1]) +
                " does not divide among " + std::to_string(k.threads) + " threads";
      return p;
    }
    p.frag[ri] = l;
  }
  // 4. Resources.
  for (auto& [r, l] : p.frag) p.regs_per_thread += l.per_thread();
  if (p.regs_per_thread > kMaxTileRegs) {
    p.error = "tiles need " + std::to_string(p.regs_per_thread) + " registers per thread with " +
              std::to_string(k.threads) + " threads (limit " + std::to_string(kMaxTileRegs) + ")";
    return p;
  }
  auto smem_with = [&](int64_t stages) { return smem_layout(k, p, stages, nullptr); };
  if (p.ws) {
    for (int64_t s : {6, 5, 4, 3, 2})
      if (smem_with(s) <= kMaxSmemBytes) {
        p.stages = s;
        break;
      }
  } else if (p.async_copy)
    for (int64_t s : {4, 3})
      if (smem_with(s) <= kMaxSmemBytes) {
        p.stages = s;
        break;
      }
  p.smem_bytes = smem_with(p.stages);
  if (p.ws) {
    std::map<int, int64_t> offs;
    smem_layout(k, p, p.stages, &offs);
    p.bar_offset = offs.at(-1);
  }
  if (p.smem_bytes > kMaxSmemBytes) {
    p.error = "needs " + std::to_string(p.smem_bytes) + " bytes of shared memory (limit " +
              std::to_string(kMaxSmemBytes) + ")";
    return p;
  }
  // 5. Edge predication is dropped on every dimension that @aligned names.
  for (auto& a : k.aligned) p.unchecked_dims.insert(a.dim);
  return p;
}

std::string print_plan(const ir::Kernel& k, const Plan& p) {
  std::string o = "plan " + k.name + " (threads " + std::to_string(p.threads) + ")\n";
  if (!p.error.empty()) return o + "  invalid: " + p.error + "\n";
  for (auto& [r, l] : p.frag) {
    o += "  %" + k.regs[r].name + ": registers, ";
    if (l.kind == Layout::Simt)
      o += "simt " + std::to_string(l.tr) + "x" + std::to_string(l.tc) + " threads, " +
           std::to_string(l.R / l.tr) + "x" + std::to_string(l.C / l.tc) + " per thread" +
           (l.gc > 1 ? ", column groups of " + std::to_string(l.gc) : "") + "\n";
    else if (l.kind == Layout::Mma)
      o += "mma.m16n8k16 " + std::to_string(l.wm) + "x" + std::to_string(l.wn) + " warps, " +
           std::to_string(l.mi) + "x" + std::to_string(l.ni) + " tiles per warp\n";
    else
      o +=
          "wgmma.m64n" + std::to_string(l.C) + "k16, " + std::to_string(l.R / 64) + " warpgroups\n";
  }
  for (int r : p.smem)
    o += "  %" + k.regs[r].name + ": shared memory" +
         (p.pitch.count(r) ? ", pitch " + std::to_string(p.pitch.at(r)) : "") +
         (p.swizzle.count(r)
              ? p.swizzle.at(r) == 1 ? ", 128B swizzle K-major" : ", 128B swizzle N-major"
              : "") +
         (p.double_buffered.count(r) ? ", " + std::to_string(p.stages) + " stages" +
                                           (p.ws           ? " (TMA, warp-specialized)"
                                            : p.async_copy ? " (cp.async)"
                                                           : "")
                                     : std::string()) +
         "\n";
  for (auto& d : p.dots)
    o += "  dot %" + k.regs[d.acc].name + " += %" + k.regs[d.a].name +
         (d.trans ? " @ T(%" : " @ (%") + k.regs[d.b].name + ")" +
         (d.mma ? " tensor cores" : " simt") + (d.pipelined ? ", pipelined" : "") + "\n";
  if (p.ws)
    o += "  warp-specialized: " + std::to_string(p.threads) +
         " consumer threads + 1 TMA producer warpgroup, persistent grid\n";
  std::string dims;
  for (int d : p.unchecked_dims) dims += " " + k.dims[d];
  if (!dims.empty()) o += "  no edge checks on" + dims + "\n";
  o += "  registers/thread " + std::to_string(p.regs_per_thread) + ", shared " +
       std::to_string(p.smem_bytes) + " bytes\n";
  return o;
}

}  // namespace phobos::passes
