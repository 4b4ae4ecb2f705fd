// Tile IR + plan -> CUDA C++ (one __global__ per instance), for NVRTC.
//
// Register tiles are per-thread arrays laid out by the plan (SIMT blocks or mma.m16n8k16
// fragments); shared tiles are whole tiles in dynamic shared memory. Elementwise expressions are
// evaluated per owned element, so an epilogue after matmul is fused into the store (C read once,
// written once). Barriers are inserted conservatively around shared-memory writes and the
// duplicates removed (pass "barriers"); under @aligned the named dimensions have no edge checks.
#include <cmath>
#include <functional>

#include "../build.h"
#include "../passes/plan.h"
#include "emit.h"

namespace phobos {

const char* cuda_prelude();

using ir::Node;
using ir::NodeP;
using ir::Op;
using ir::Stmt;
using ir::VType;
using passes::Layout;
using passes::Plan;

namespace {

const char* ctype(DType t) {
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F16:
      return "__half";
    case DType::BF16:
      return "__nv_bfloat16";
    case DType::I32:
      return "int";
    case DType::I8:
      return "signed char";
    case DType::Bool:
      return "bool";
  }
  return "float";
}
const char* compute_type(DType t) {
  return is_float(t) ? "float" : t == DType::Bool ? "bool" : "int";
}

std::string cname(const ir::Kernel& k, int r) {
  std::string s = "r_" + k.regs[r].name;
  for (auto& c : s)
    if (c == '.') c = '_';
  return s;
}

class Emitter {
 public:
  Emitter(const ir::Kernel& k, const Plan& p) : k_(k), p_(p) {}

  std::string run() {
    o_ = cuda_prelude();
    o_ += "\n// " + k_.name + ": " + std::to_string(k_.threads) + " threads, " +
          std::to_string(p_.smem_bytes) + " bytes of shared memory\n";
    o_ += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(k_.threads) + ") " +
          cuda_entry_name(k_) + "(";
    std::vector<std::string> params;
    for (auto& a : k_.args)
      params.push_back(a.is_tensor ? std::string(ctype(a.dt)) + "* __restrict__ " + a.name
                                   : std::string(compute_type(a.dt)) + " " + a.name);
    for (auto& d : k_.dims) params.push_back("int d_" + d);
    for (size_t i = 0; i < params.size(); ++i) o_ += (i ? ", " : "") + params[i];
    o_ += ") {\n";
    line("const int tid = (int)threadIdx.x;");
    line("(void)tid;");
    if (!p_.smem.empty()) line("extern __shared__ __align__(16) unsigned char ph_smem[];");
    int64_t off = 0;
    for (int r : p_.smem) {
      const VType& t = k_.regs[r].type;
      int64_t bytes = p_.smem_elems(k_, r) * static_cast<int64_t>(dtype_size(t.dt));
      int64_t n = p_.double_buffered.count(r) ? p_.stages : 1;
      line(std::string(ctype(t.dt)) + "* " + cname(k_, r) + " = reinterpret_cast<" + ctype(t.dt) +
           "*>(ph_smem + " + std::to_string(off) + ");  // " + ir::type_str(t) +
           (n > 1 ? " x " + std::to_string(n) + " stages" : ""));
      off += (bytes * n + 15) / 16 * 16;
    }
    for (size_t r = 0; r < k_.regs.size(); ++r) {
      int ri = static_cast<int>(r);
      const VType& t = k_.regs[r].type;
      if (p_.smem.count(ri) || loop_vars().count(ri)) continue;
      if (t.scalar())
        line(std::string(compute_type(t.dt)) + " " + cname(k_, ri) + " = 0;");
      else
        line(std::string(compute_type(t.dt)) + " " + cname(k_, ri) + "[" +
             std::to_string(p_.frag.at(ri).per_thread()) + "];");
    }
    block(k_.body);
    o_ += "}\n";
    return dedupe_barriers(o_);
  }

 private:
  const ir::Kernel& k_;
  const Plan& p_;
  std::string o_;
  int ind_ = 1;
  std::map<int, std::string> override_;  // register -> expression (prefetch of the next step)
  int tmp_ = 0;

  void line(const std::string& s) { o_ += std::string(ind_ * 2, ' ') + s + "\n"; }
  std::string fresh(const char* p) { return std::string(p) + std::to_string(tmp_++); }

  std::set<int> loop_vars() const {
    std::set<int> s;
    std::function<void(const std::vector<Stmt>&)> f = [&](const std::vector<Stmt>& b) {
      for (auto& x : b) {
        if (x.kind == Stmt::For) s.insert(x.reg);
        f(x.body);
        f(x.else_body);
      }
    };
    f(k_.body);
    return s;
  }

  static std::string flit(double v) {
    if (v != v) return "__int_as_float(0x7fc00000)";
    if (v == INFINITY) return "__int_as_float(0x7f800000)";
    if (v == -INFINITY) return "__int_as_float(0xff800000)";
    char b[48];
    snprintf(b, sizeof b, "%.9gf", v);
    std::string s = b;
    if (s.find_first_of(".en") == std::string::npos) s.insert(s.size() - 1, ".0");
    return s;
  }

  std::string round(DType dt, const std::string& e) {
    if (dt == DType::F16) return "ph_rh(" + e + ")";
    if (dt == DType::BF16) return "ph_rb(" + e + ")";
    return e;
  }

  // Dimension d of tensor argument t as a C expression.
  std::string dim(int t, size_t d) const {
    const ir::Arg& a = k_.args[t];
    return a.dims[d] < 0 ? std::to_string(a.dim_const[d]) : "d_" + k_.dims[a.dims[d]];
  }

  // Offset and in-bounds predicate ("" when unchecked) of element (r, c) of a tensor load.
  void load_addr(const Node& n, const std::string& r, const std::string& c, const std::string& i,
                 std::string* off, std::string* pred) {
    size_t tile_axis = 0;
    const auto& sl = n.slices;
    int tiled = 0;
    for (auto& s : sl) tiled += !s.point;
    for (size_t d = 0; d < sl.size(); ++d) {
      std::string start = elem(sl[d].start, "0", "0", i);
      std::string idx = start;
      if (!sl[d].point) {
        std::string e = tiled == 2 && tile_axis == 0 ? r : c;
        idx = "(" + start + " + " + e + ")";
        ++tile_axis;
      }
      *off = off->empty() ? idx : "(" + *off + ") * " + dim(n.idx, d) + " + " + idx;
      int sym = k_.args[n.idx].dims[d];
      if (sym < 0 || !p_.unchecked_dims.count(sym)) {
        *pred += (pred->empty() ? "" : " && ") + std::string("(unsigned)") + idx + " < (unsigned)" +
                 dim(n.idx, d);
      }
    }
  }

  // 16-byte chunks: a shared tile filled straight from a tensor slice of its own element type
  // (no conversion) whose rows are whole chunks moves 16 bytes per load and store. A chunk
  // takes the vector path when it is in bounds and its global address is 16-byte aligned
  // (checked at run time, so ragged shapes and odd leading dimensions stay correct).
  int64_t vec_width(int reg, const NodeP& v) const {
    const VType& t = k_.regs[reg].type;
    if (t.shape.size() != 2 || v->op != Op::Load || v->idx < 0 || v->type.dt != t.dt) return 0;
    int tiled = 0;
    for (auto& s : v->slices) tiled += !s.point;
    if (tiled != 2 || v->slices.back().point) return 0;
    int64_t V = 16 / static_cast<int64_t>(dtype_size(t.dt));
    if (V < 2 || t.shape[1] % V || p_.pitch_of(k_, reg) % V) return 0;
    return V;
  }

  // Emits `uint4 dst` = the V elements of load v starting at tile element (r, c).
  void vec_load(const NodeP& v, int64_t V, const std::string& r, const std::string& c,
                const std::string& dst, bool declare) {
    std::string off, pred, off2, pred_last;
    load_addr(*v, r, c, "0", &off, &pred);
    load_addr(*v, r, "(" + c + " + " + std::to_string(V - 1) + ")", "0", &off2, &pred_last);
    const char* ty = ctype(v->type.dt);
    if (declare) line("uint4 " + dst + ";");
    line("{");
    ++ind_;
    line("const " + std::string(ty) + "* ph_src = &" + k_.args[v->idx].name + "[" + off + "];");
    std::string ok = "(reinterpret_cast<unsigned long long>(ph_src) & 15) == 0";
    if (!pred.empty()) ok = pred + " && " + pred_last + " && " + ok;
    line("if (" + ok + ") {");
    line("  " + dst + " = *reinterpret_cast<const uint4*>(ph_src);");
    line("} else {");
    ++ind_;
    line("__align__(16) " + std::string(ty) + " ph_t[" + std::to_string(V) + "];");
    line("#pragma unroll");
    line("for (int ph_v = 0; ph_v < " + std::to_string(V) + "; ++ph_v) {");
    ++ind_;
    std::string o3, p3;
    load_addr(*v, r, "(" + c + " + ph_v)", "0", &o3, &p3);
    (void)o3;
    std::string zero = store_cast(v->type.dt, "0.0f");
    line("ph_t[ph_v] = " + (p3.empty() ? "ph_src[ph_v]" : "(" + p3 + ") ? ph_src[ph_v] : " + zero) +
         ";");
    close();
    line(dst + " = *reinterpret_cast<const uint4*>(ph_t);");
    close();
    close();
  }

  // Element (r, c) of node n; r/c are C expressions ("0" for absent axes).
  std::string elem(const NodeP& n, const std::string& r, const std::string& c,
                   const std::string& i) {
    const VType& t = n->type;
    auto sub = [&](const NodeP& a) {
      const auto& s = a->type.shape;
      if (s.empty()) return elem(a, "0", "0", i);
      if (s.size() == 1) return elem(a, "0", s[0] == 1 ? "0" : c, i);
      return elem(a, s[0] == 1 ? "0" : r, s[1] == 1 ? "0" : c, i);
    };
    switch (n->op) {
      case Op::Const:
        return is_float(t.dt) ? flit(n->cval) : std::to_string(static_cast<long long>(n->cval));
      case Op::Ctx: {
        static const char* v[3] = {"blockIdx", "threadIdx", "gridDim"};
        return std::string("(int)") + v[n->idx / 3] + "." + char('x' + n->idx % 3);
      }
      case Op::Dim:
        return "d_" + k_.dims[n->idx];
      case Op::Param:
        return k_.args[n->idx].name;
      case Op::Reg: {
        if (override_.count(n->idx)) return override_.at(n->idx);
        if (t.scalar()) return cname(k_, n->idx);
        if (p_.smem.count(n->idx)) {
          std::string idx =
              t.shape.size() == 1
                  ? c
                  : "(" + r + ") * " + std::to_string(p_.pitch_of(k_, n->idx)) + " + (" + c + ")";
          std::string base = cname(k_, n->idx) +
                             (p_.double_buffered.count(n->idx)
                                  ? " + ph_stage * " + std::to_string(p_.smem_elems(k_, n->idx))
                                  : "");
          return "ph_ld((" + base + ")[" + idx + "])";
        }
        return cname(k_, n->idx) + "[" + i + "]";
      }
      case Op::Full:
        return elem(n->args[0], "0", "0", i);
      case Op::Load: {
        std::string off, pred;
        load_addr(*n, r, c, i, &off, &pred);
        std::string ld = "ph_ld(" + k_.args[n->idx].name + "[" + off + "])";
        if (pred.empty()) return ld;
        return "(" + pred + " ? " + ld + " : " + (is_float(t.dt) ? "0.0f" : "0") + ")";
      }
      case Op::Neg:
        return "(-" + sub(n->args[0]) + ")";
      case Op::Not:
        return "(!" + sub(n->args[0]) + ")";
      case Op::Cast: {
        std::string a = sub(n->args[0]);
        if (is_float(t.dt)) return round(t.dt, "(float)(" + a + ")");
        if (t.dt == DType::Bool) return "((" + a + ") != 0)";
        if (t.dt == DType::I8) return "(int)(signed char)(int)(" + a + ")";
        return "(int)(" + a + ")";
      }
      case Op::Math: {
        std::string a = sub(n->args[0]);
        std::string f = n->fn;
        std::string call = f == "exp"    ? "__expf(" + a + ")"
                           : f == "log"  ? "logf(" + a + ")"
                           : f == "sqrt" ? "sqrtf(" + a + ")"
                           : f == "tanh" ? "tanhf(" + a + ")"
                           : f == "abs"  ? (is_float(t.dt) ? "fabsf(" + a + ")" : "abs(" + a + ")")
                                         : "ph_" + f + "(" + a + ")";
        return round(t.dt, call);
      }
      default:
        break;
    }
    std::string a = sub(n->args[0]), b = sub(n->args[1]);
    bool fl = is_float(t.dt) || (ir::is_cmp(n->op) &&
                                 (is_float(n->args[0]->type.dt) || is_float(n->args[1]->type.dt)));
    std::string e;
    switch (n->op) {
      case Op::Add:
        e = "(" + a + " + " + b + ")";
        break;
      case Op::Sub:
        e = "(" + a + " - " + b + ")";
        break;
      case Op::Mul:
        e = "(" + a + " * " + b + ")";
        break;
      case Op::Div:
        e = fl ? "(" + a + " / " + b + ")" : "ph_div(" + a + ", " + b + ")";
        break;
      case Op::Mod:
        e = fl ? "fmodf(" + a + ", " + b + ")" : "ph_mod(" + a + ", " + b + ")";
        break;
      case Op::Lt:
        return "(" + a + " < " + b + ")";
      case Op::Le:
        return "(" + a + " <= " + b + ")";
      case Op::Gt:
        return "(" + a + " > " + b + ")";
      case Op::Ge:
        return "(" + a + " >= " + b + ")";
      case Op::Eq:
        return "(" + a + " == " + b + ")";
      case Op::Ne:
        return "(" + a + " != " + b + ")";
      case Op::And:
        return "(" + a + " && " + b + ")";
      case Op::Or:
        return "(" + a + " || " + b + ")";
      case Op::Min:
        e = fl ? "ph_min((float)" + a + ", (float)" + b + ")" : "ph_min(" + a + ", " + b + ")";
        break;
      case Op::Max:
        e = fl ? "ph_max((float)" + a + ", (float)" + b + ")" : "ph_max(" + a + ", " + b + ")";
        break;
      case Op::Cdiv:
        return "ph_cdiv(" + a + ", " + b + ")";
      default:
        throw Error("internal: the CUDA emitter cannot lower '" + std::string(ir::op_name(n->op)) +
                    "'");
    }
    if (t.dt == DType::I8) return "(int)(signed char)" + e;
    return round(t.dt, e);
  }

  // Column of a SIMT layout's per-thread column index jj (an expression).
  static std::string simt_col(const Layout& l, const std::string& jj) {
    std::string tc = std::to_string(l.tc), gc = std::to_string(l.gc);
    if (l.gc == 1) return "tid % " + tc + " + " + jj + " * " + tc;
    return "(tid % " + tc + ") * " + gc + " + " + jj + " % " + gc + " + (" + jj + " / " + gc +
           ") * " + std::to_string(l.tc * l.gc);
  }

  // Opens a loop over the elements this thread owns under layout l; defines r, c, i.
  void open_owned(const Layout& l, std::string* r, std::string* c, std::string* i) {
    *i = fresh("i");
    *r = fresh("r");
    *c = fresh("c");
    line("#pragma unroll");
    line("for (int " + *i + " = 0; " + *i + " < " + std::to_string(l.per_thread()) + "; ++" + *i +
         ") {");
    ++ind_;
    if (l.kind == Layout::Simt) {
      int64_t pc = l.C / l.tc;
      line("const int " + *r + " = tid / " + std::to_string(l.tc) + " + (" + *i + " / " +
           std::to_string(pc) + ") * " + std::to_string(l.tr) + ";");
      line("const int " + *c + " = " + simt_col(l, "(" + *i + " % " + std::to_string(pc) + ")") +
           ";");
    } else {
      std::string wr = "(tid / 32 / " + std::to_string(l.wn) + ")",
                  wc = "(tid / 32 % " + std::to_string(l.wn) + ")";
      line("const int " + *r + " = " + wr + " * " + std::to_string(l.R / l.wm) + " + (" + *i +
           " / " + std::to_string(l.ni * 4) + ") * 16 + ph_c_row(tid % 32, " + *i + " % 4);");
      line("const int " + *c + " = " + wc + " * " + std::to_string(l.C / l.wn) + " + ((" + *i +
           " / 4) % " + std::to_string(l.ni) + ") * 8 + ph_c_col(tid % 32, " + *i + " % 4);");
    }
    line("(void)" + *r + ";");
    line("(void)" + *c + ";");
  }
  void close() {
    --ind_;
    line("}");
  }

  // The layout of the first register tile in n (to iterate a store over), if any.
  const Layout* frag_layout(const NodeP& n) const {
    const Layout* l = nullptr;
    ir::walk_node(n, [&](const Node& x) {
      if (!l && x.op == Op::Reg && p_.frag.count(x.idx)) l = &p_.frag.at(x.idx);
    });
    return l;
  }

  // Cooperative loop over every element of a tile of this shape.
  void open_all(const std::vector<int64_t>& shape, std::string* r, std::string* c, std::string* e) {
    int64_t C = shape.back(), n = 1;
    for (auto s : shape) n *= s;
    *e = fresh("e");
    *r = fresh("r");
    *c = fresh("c");
    line("for (int " + *e + " = tid; " + *e + " < " + std::to_string(n) + "; " + *e +
         " += " + std::to_string(k_.threads) + ") {");
    ++ind_;
    line("const int " + *r + " = " + *e + " / " + std::to_string(C) + ", " + *c + " = " + *e +
         " % " + std::to_string(C) + ";");
    line("(void)" + *r + ";");
    line("(void)" + *c + ";");
  }

  std::string smem_at(int reg, const std::string& stage, const std::string& r, const std::string& c,
                      const std::string& e) const {
    const VType& t = k_.regs[reg].type;
    std::string idx = t.shape.size() == 2
                          ? "(" + r + ") * " + std::to_string(p_.pitch_of(k_, reg)) + " + " + c
                          : e;
    return cname(k_, reg) + "[" +
           (stage.empty() ? "" : stage + " * " + std::to_string(p_.smem_elems(k_, reg)) + " + ") +
           idx + "]";
  }

  void smem_fill(int reg, const NodeP& v, const std::string& stage) {
    const VType& t = k_.regs[reg].type;
    std::string r, c, e;
    if (int64_t V = vec_width(reg, v)) {
      std::vector<int64_t> chunks = {t.shape[0], t.shape[1] / V};
      open_all(chunks, &r, &c, &e);
      std::string col = "(" + c + ") * " + std::to_string(V);
      vec_load(v, V, r, col, "ph_chunk", true);
      line("*reinterpret_cast<uint4*>(&" + smem_at(reg, stage, r, col, e) + ") = ph_chunk;");
      close();
      return;
    }
    open_all(t.shape, &r, &c, &e);
    line(smem_at(reg, stage, r, c, e) + " = " + store_cast(t.dt, elem(v, r, c, e)) + ";");
    close();
  }

  std::string store_cast(DType dt, const std::string& v) {
    switch (dt) {
      case DType::F16:
        return "__float2half_rn(" + v + ")";
      case DType::BF16:
        return "__float2bfloat16_rn(" + v + ")";
      case DType::F32:
        return "(float)(" + v + ")";
      case DType::I32:
        return "(int)(" + v + ")";
      case DType::I8:
        return "(signed char)(int)(" + v + ")";
      case DType::Bool:
        return "(bool)(" + v + ")";
    }
    return v;
  }

  void def(const Stmt& s) {
    const VType& t = k_.regs[s.reg].type;
    if (t.scalar()) {
      line(cname(k_, s.reg) + " = " + elem(s.value, "0", "0", "0") + ";");
      return;
    }
    if (p_.smem.count(s.reg)) {
      line("__syncthreads();");
      smem_fill(s.reg, s.value, p_.double_buffered.count(s.reg) ? "ph_stage" : "");
      line("__syncthreads();");
      return;
    }
    const Layout& l = p_.frag.at(s.reg);
    std::string r, c, i;
    open_owned(l, &r, &c, &i);
    line(cname(k_, s.reg) + "[" + i + "] = " + elem(s.value, r, c, i) + ";");
    close();
  }

  void dot(const passes::DotSite& d) {
    const Layout& l = p_.frag.at(d.acc);
    const VType& at = k_.regs[d.a].type;
    int64_t K = at.shape[1];
    std::string A = cname(k_, d.a), B = cname(k_, d.b), acc = cname(k_, d.acc);
    std::string PA = std::to_string(p_.pitch_of(k_, d.a)),
                PB = std::to_string(p_.pitch_of(k_, d.b));
    if (p_.double_buffered.count(d.a))
      A = "(" + A + " + ph_stage * " + std::to_string(p_.smem_elems(k_, d.a)) + ")";
    if (p_.double_buffered.count(d.b))
      B = "(" + B + " + ph_stage * " + std::to_string(p_.smem_elems(k_, d.b)) + ")";
    if (!d.mma) {
      auto bk = [&](const std::string& kk, const std::string& n) {
        return d.trans ? B + "[(" + n + ") * " + PB + " + " + kk + "]"
                       : B + "[(" + kk + ") * " + PB + " + " + n + "]";
      };
      int64_t pr = l.R / l.tr, pc = l.C / l.tc;
      if (simt_vec_dot(d, l, A, B, PA, PB, acc)) return round_acc(d, l);
      std::string q = fresh("q");
      line("#pragma unroll 4");
      line("for (int " + q + " = 0; " + q + " < " + std::to_string(K) + "; ++" + q + ") {");
      ++ind_;
      line("float av[" + std::to_string(pr) + "], bv[" + std::to_string(pc) + "];");
      line("#pragma unroll");
      line("for (int ii = 0; ii < " + std::to_string(pr) + "; ++ii) av[ii] = ph_ld(" + A +
           "[(tid / " + std::to_string(l.tc) + " + ii * " + std::to_string(l.tr) + ") * " + PA +
           " + " + q + "]);");
      line("#pragma unroll");
      line("for (int jj = 0; jj < " + std::to_string(pc) + "; ++jj) bv[jj] = ph_ld(" +
           bk(q, simt_col(l, "jj")) + ");");
      line("#pragma unroll");
      line("for (int ii = 0; ii < " + std::to_string(pr) + "; ++ii)");
      line("#pragma unroll");
      line("  for (int jj = 0; jj < " + std::to_string(pc) + "; ++jj) " + acc + "[ii * " +
           std::to_string(pc) + " + jj] += av[ii] * bv[jj];");
      close();
    } else {
      // Tensor cores: fragments come from the padded shared tiles through ldmatrix (maps in
      // mma_map.inc, checked on the CPU by tests/phobos/mma_map_test.cpp); the product is the
      // tile library's mma_16816 (src/cuda/tile/mma.cuh).
      std::string kk = fresh("kk");
      std::string row0 =
          "(tid / 32 / " + std::to_string(l.wn) + ") * " + std::to_string(l.R / l.wm);
      std::string col0 =
          "(tid / 32 % " + std::to_string(l.wn) + ") * " + std::to_string(l.C / l.wn);
      std::string ty = at.dt == DType::BF16 ? "tc::tile::bf16" : "tc::tile::f16";
      std::string MI = std::to_string(l.mi), NI = std::to_string(l.ni);
      line("#pragma unroll");
      line("for (int " + kk + " = 0; " + kk + " < " + std::to_string(K) + "; " + kk + " += 16) {");
      ++ind_;
      line("const int lane = tid % 32;");
      line("tc::tile::FragA16x16 fa[" + MI + "];");
      line("tc::tile::FragB16x8 fb[" + NI + "];");
      line("#pragma unroll");
      line("for (int mi = 0; mi < " + MI + "; ++mi)");
      line("  tc::tile::ldmatrix_x4(fa[mi].r, &" + A + "[(" + row0 +
           " + mi * 16 + ph_lda_row(lane)) * " + PA + " + " + kk + " + ph_lda_col(lane)]);");
      // B: two n-tiles per ldmatrix.x4, a last odd one with .x2 (lanes 0-15 give addresses).
      std::string baddr = d.trans ? "&" + B + "[(" + col0 + " + nj * 8 + ph_ldbt_row(lane)) * " +
                                        PB + " + " + kk + " + ph_ldbt_col(lane)]"
                                  : "&" + B + "[(" + kk + " + ph_ldb_row(lane)) * " + PB + " + " +
                                        col0 + " + nj * 8 + ph_ldb_col(lane)]";
      std::string x4 = d.trans ? "tc::tile::ldmatrix_x4" : "ph_ldmatrix_x4_trans";
      std::string x2 = d.trans ? "tc::tile::ldmatrix_x2" : "ph_ldmatrix_x2_trans";
      line("#pragma unroll");
      line("for (int nj = 0; nj + 1 < " + NI + "; nj += 2) {");
      ++ind_;
      line("tc::tile::u32 t4[4];");
      line(x4 + "(t4, " + baddr + ");");
      line(
          "fb[nj].r[0] = t4[0]; fb[nj].r[1] = t4[1]; fb[nj + 1].r[0] = t4[2]; fb[nj + 1].r[1] = "
          "t4[3];");
      close();
      if (l.ni % 2) {
        line("{");
        ++ind_;
        line("const int nj = " + std::to_string(l.ni - 1) + ";");
        line(x2 + "(fb[nj].r, " + baddr + ");");
        close();
      }
      line("#pragma unroll");
      line("for (int mi = 0; mi < " + MI + "; ++mi)");
      line("#pragma unroll");
      line("  for (int nj = 0; nj < " + NI + "; ++nj) {");
      ++ind_;
      std::string base = acc + "[(mi * " + NI + " + nj) * 4 + ";
      line("tc::tile::FragC16x8 fc = {{" + base + "0], " + base + "1], " + base + "2], " + base +
           "3]}};");
      line("tc::tile::mma_16816<" + ty + ">(fc, fa[mi], fb[nj]);");
      line(base + "0] = fc.r[0]; " + base + "1] = fc.r[1]; " + base + "2] = fc.r[2]; " + base +
           "3] = fc.r[3];");
      close();
      close();
    }
    round_acc(d, l);
  }

  // f32 SIMT dot with 16-byte shared loads: A (and B of dot_t) rows read 4 k-steps at a time
  // as float4, B of dot read as float4 column groups (layout gc = 4). Per 4 k-steps a thread
  // issues pr + (pc/4)*4 (or pr + pc) 16-byte loads for 4*pr*pc FMAs.
  bool simt_vec_dot(const passes::DotSite& d, const Layout& l, const std::string& A,
                    const std::string& B, const std::string& PA, const std::string& PB,
                    const std::string& acc) {
    const VType& at = k_.regs[d.a].type;
    int64_t K = at.shape[1], pr = l.R / l.tr, pc = l.C / l.tc;
    int64_t pa = p_.pitch_of(k_, d.a), pb = p_.pitch_of(k_, d.b);
    if (at.dt != DType::F32 || k_.regs[d.b].type.dt != DType::F32 || K % 4 || pa % 4 || pb % 4)
      return false;
    if (!d.trans && l.gc != 4) return false;
    std::string q = fresh("q"), tc = std::to_string(l.tc), tr = std::to_string(l.tr);
    std::string PR = std::to_string(pr), PC = std::to_string(pc);
    line("#pragma unroll 2");
    line("for (int " + q + " = 0; " + q + " < " + std::to_string(K) + "; " + q + " += 4) {");
    ++ind_;
    line("float4 av[" + PR + "];");
    line("#pragma unroll");
    line("for (int ii = 0; ii < " + PR + "; ++ii) av[ii] = *reinterpret_cast<const float4*>(&" + A +
         "[(tid / " + tc + " + ii * " + tr + ") * " + PA + " + " + q + "]);");
    if (d.trans) {
      line("float4 bv4[" + PC + "];");
      line("#pragma unroll");
      line("for (int jj = 0; jj < " + PC + "; ++jj) bv4[jj] = *reinterpret_cast<const float4*>(&" +
           B + "[(" + simt_col(l, "jj") + ") * " + PB + " + " + q + "]);");
    }
    line("#pragma unroll");
    line("for (int u = 0; u < 4; ++u) {");
    ++ind_;
    line("float bv[" + PC + "];");
    if (d.trans) {
      line("#pragma unroll");
      line("for (int jj = 0; jj < " + PC + "; ++jj) bv[jj] = ph_f4(bv4[jj], u);");
    } else {
      line("#pragma unroll");
      line("for (int g = 0; g < " + std::to_string(pc / 4) + "; ++g) {");
      line("  const float4 t = *reinterpret_cast<const float4*>(&" + B + "[(" + q + " + u) * " +
           PB + " + (tid % " + tc + ") * 4 + g * " + std::to_string(l.tc * 4) + "]);");
      line("  bv[g * 4] = t.x; bv[g * 4 + 1] = t.y; bv[g * 4 + 2] = t.z; bv[g * 4 + 3] = t.w;");
      line("}");
    }
    line("#pragma unroll");
    line("for (int ii = 0; ii < " + PR + "; ++ii) {");
    line("  const float a = ph_f4(av[ii], u);");
    line("  #pragma unroll");
    line("  for (int jj = 0; jj < " + PC + "; ++jj) " + acc + "[ii * " + PC +
         " + jj] += a * bv[jj];");
    line("}");
    close();
    close();
    return true;
  }

  void round_acc(const passes::DotSite& d, const Layout& l) {
    std::string acc = cname(k_, d.acc);
    if (k_.regs[d.acc].type.dt == DType::F16 || k_.regs[d.acc].type.dt == DType::BF16) {
      line("#pragma unroll");
      line("for (int i = 0; i < " + std::to_string(l.per_thread()) + "; ++i) " + acc +
           "[i] = " + round(k_.regs[d.acc].type.dt, acc + "[i]") + ";");
    }
  }

  const passes::DotSite* dot_at(const Stmt& s) const {
    for (auto& d : p_.dots)
      if (d.def == &s) return &d;
    return nullptr;
  }

  void store(const Stmt& s) {
    const NodeP& v = s.value;
    std::vector<int64_t> shape = v->type.shape;
    std::string r, c, e;
    const Layout* l = frag_layout(v);
    if (l && shape.size() == 2 && l->R == shape[0] && l->C == shape[1])
      open_owned(*l, &r, &c, &e);
    else if (shape.empty()) {
      r = c = e = "0";
      line("if (tid == 0) {");
      ++ind_;
    } else
      open_all(shape, &r, &c, &e);
    // The slice's element (r, c): reuse the Load lowering for offset and predicate.
    auto ld = std::make_shared<Node>();
    ld->op = Op::Load;
    ld->idx = s.tensor;
    ld->slices = s.slices;
    ld->type = VType{k_.args[s.tensor].dt, shape, false};
    std::string off, pred;
    int tiled = 0, axis = 0;
    for (auto& sl : s.slices) tiled += !sl.point;
    for (size_t d = 0; d < s.slices.size(); ++d) {
      std::string idx = elem(s.slices[d].start, "0", "0", e);
      if (!s.slices[d].point) idx = "(" + idx + " + " + (tiled == 2 && axis++ == 0 ? r : c) + ")";
      off = off.empty() ? idx : "(" + off + ") * " + dim(s.tensor, d) + " + " + idx;
      int sym = k_.args[s.tensor].dims[d];
      if (sym < 0 || !p_.unchecked_dims.count(sym))
        pred += (pred.empty() ? "" : " && ") + std::string("(unsigned)") + idx + " < (unsigned)" +
                dim(s.tensor, d);
    }
    std::string val = elem(v, r, c, e);
    std::string st = "ph_st(&" + k_.args[s.tensor].name + "[" + off + "], " + val + ");";
    line(pred.empty() ? st : "if (" + pred + ") " + st);
    close();
  }

  // Issues the copies of operand `reg` for one step into stage `stage`: 16-byte cp.async per
  // chunk that is in bounds and aligned, else plain shared stores with zero fill (the step
  // reading them is behind a barrier either way).
  void async_fill(int reg, const NodeP& v, const std::string& stage) {
    const VType& t = k_.regs[reg].type;
    int64_t V = vec_width(reg, v), w = t.shape[1] / V, items = t.shape[0] * w;
    int64_t n = (items + k_.threads - 1) / k_.threads;
    std::string j = fresh("j");
    line("#pragma unroll");
    line("for (int " + j + " = 0; " + j + " < " + std::to_string(n) + "; ++" + j + ") {");
    ++ind_;
    line("const int e_ = tid + " + j + " * " + std::to_string(k_.threads) + ";");
    if (items % k_.threads) line("if (e_ >= " + std::to_string(items) + ") break;");
    line("const int r_ = e_ / " + std::to_string(w) + ", c_ = (e_ % " + std::to_string(w) + ") * " +
         std::to_string(V) + ";");
    std::string off, pred, off2, pred_last;
    load_addr(*v, "r_", "c_", "0", &off, &pred);
    load_addr(*v, "r_", "(c_ + " + std::to_string(V - 1) + ")", "0", &off2, &pred_last);
    const char* ty = ctype(t.dt);
    line("const " + std::string(ty) + "* ph_src = &" + k_.args[v->idx].name + "[" + off + "];");
    line(std::string(ty) + "* ph_dst = &" + smem_at(reg, stage, "r_", "c_", "e_") + ";");
    std::string ok = "(reinterpret_cast<unsigned long long>(ph_src) & 15) == 0";
    if (!pred.empty()) ok = pred + " && " + pred_last + " && " + ok;
    line("if (" + ok + ") {");
    line("  ph_cp_async16(ph_dst, ph_src);");
    line("} else {");
    ++ind_;
    line("#pragma unroll");
    line("for (int ph_v = 0; ph_v < " + std::to_string(V) + "; ++ph_v)");
    std::string o3, p3;
    load_addr(*v, "r_", "(c_ + ph_v)", "0", &o3, &p3);
    std::string zero = store_cast(t.dt, "0.0f");
    line("  ph_dst[ph_v] = " +
         (p3.empty() ? "ph_src[ph_v]" : "(" + p3 + ") ? ph_src[ph_v] : " + zero) + ";");
    close();
    close();
  }

  // @pipeline with cp.async, S = p_.stages: steps 0 .. S-2 are in flight before the loop; at
  // each step a thread waits for its own copies of this step (wait_group S-2), one barrier makes
  // everyone's visible and retires the stage read by the previous step, which is then refilled
  // with step + S-1 while this step computes. One barrier per step.
  void async_pipeline(const Stmt& s, const std::map<int, const Stmt*>& defs, const std::string& v,
                      const std::string& lo, const std::string& hi, const std::string& st) {
    std::string S = std::to_string(p_.stages);
    line("{");
    ++ind_;
    line("#pragma unroll");
    line("for (int ph_s = 0; ph_s < " + std::to_string(p_.stages - 1) + "; ++ph_s) {");
    ++ind_;
    line("const int ph_kt = " + lo + " + ph_s * " + st + ";");
    line("if (ph_kt < " + hi + ") {");
    ++ind_;
    override_[s.reg] = "ph_kt";
    for (auto& [r, d] : defs) async_fill(r, d->value, "ph_s");
    override_.erase(s.reg);
    close();
    line("ph_cp_async_commit();");
    close();
    line("int ph_stage = 0;");
    if (s.unroll > 1) line("#pragma unroll " + std::to_string(s.unroll));
    line("for (int " + v + " = " + lo + "; " + v + " < " + hi + "; " + v + " += " + st + ") {");
    ++ind_;
    line("ph_cp_async_wait<" + std::to_string(p_.stages - 2) + ">();");
    line("__syncthreads();");
    line("{");
    ++ind_;
    line("const int ph_kt = " + v + " + " + std::to_string(p_.stages - 1) + " * " + st + ";");
    line("const int ph_w = (ph_stage + " + std::to_string(p_.stages - 1) + ") % " + S + ";");
    line("if (ph_kt < " + hi + ") {");
    ++ind_;
    override_[s.reg] = "ph_kt";
    for (auto& [r, d] : defs) async_fill(r, d->value, "ph_w");
    override_.erase(s.reg);
    close();
    line("ph_cp_async_commit();");
    close();
    for (auto& x : s.body) {
      if (x.kind == Stmt::Def && defs.count(x.reg)) continue;
      emit(x);
    }
    line("ph_stage = (ph_stage + 1) % " + S + ";");
    close();
    line("ph_cp_async_wait<0>();");
    close();
  }

  void for_loop(const Stmt& s) {
    std::string v = cname(k_, s.reg);
    std::vector<const passes::DotSite*> piped;
    for (auto& d : p_.dots)
      if (d.loop == &s && d.pipelined) piped.push_back(&d);
    if (piped.empty()) {
      if (s.unroll > 1) line("#pragma unroll " + std::to_string(s.unroll));
      line("for (int " + v + " = " + elem(s.lo, "0", "0", "0") + "; " + v + " < " +
           elem(s.hi, "0", "0", "0") + "; " + v + " += " + elem(s.step, "0", "0", "0") + ") {");
      ++ind_;
      block(s.body);
      close();
      return;
    }
    // Pipeline (@pipeline): stage 0 is filled before the loop; each step prefetches the next
    // step's operands into registers, computes on the current stage, then writes the other
    // stage. One barrier per step: the next step reads what this one wrote, and nobody writes a
    // stage until every thread has left the step that read it.
    std::set<int> ops;
    std::map<int, const Stmt*> defs;
    for (auto* d : piped) ops.insert({d->a, d->b});
    for (auto& x : s.body)
      if (x.kind == Stmt::Def && ops.count(x.reg)) defs[x.reg] = &x;
    std::string lo = elem(s.lo, "0", "0", "0"), hi = elem(s.hi, "0", "0", "0"),
                st = elem(s.step, "0", "0", "0");
    if (p_.async_copy) return async_pipeline(s, defs, v, lo, hi, st);
    line("{");
    ++ind_;
    line("int ph_stage = 0;");
    line("if (" + lo + " < " + hi + ") {");
    ++ind_;
    override_[s.reg] = "(" + lo + ")";
    for (auto& [r, d] : defs) smem_fill(r, d->value, "0");
    override_.erase(s.reg);
    close();
    line("__syncthreads();");
    if (s.unroll > 1) line("#pragma unroll " + std::to_string(s.unroll));
    line("for (int " + v + " = " + lo + "; " + v + " < " + hi + "; " + v + " += " + st + ") {");
    ++ind_;
    line("const int ph_next = " + v + " + " + st + ";");
    line("const bool ph_more = ph_next < " + hi + ";");
    std::map<int, std::string> pre;
    for (auto& [r, d] : defs) {
      const VType& t = k_.regs[r].type;
      int64_t V = std::max<int64_t>(1, vec_width(r, d->value));
      int64_t items = t.numel() / V, n = (items + k_.threads - 1) / k_.threads;
      std::string arr = fresh("pf");
      pre[r] = arr;
      line(std::string(V > 1 ? "uint4" : compute_type(t.dt)) + " " + arr + "[" + std::to_string(n) +
           "];");
      line("if (ph_more) {");
      ++ind_;
      override_[s.reg] = "ph_next";
      std::string jj = fresh("j");
      line("#pragma unroll");
      line("for (int " + jj + " = 0; " + jj + " < " + std::to_string(n) + "; ++" + jj + ") {");
      ++ind_;
      std::string e = fresh("e");
      line("const int " + e + " = tid + " + jj + " * " + std::to_string(k_.threads) + ";");
      int64_t w = t.shape.back() / V;
      line("const int r_ = " + e + " / " + std::to_string(w) + ", c_ = (" + e + " % " +
           std::to_string(w) + ") * " + std::to_string(V) + ";");
      if (V > 1) {
        line("if (" + e + " < " + std::to_string(items) + ")");
        vec_load(d->value, V, "r_", "c_", arr + "[" + jj + "]", false);
      } else {
        line(arr + "[" + jj + "] = " + e + " < " + std::to_string(items) + " ? " +
             elem(d->value, "r_", "c_", e) + " : 0;");
      }
      close();
      override_.erase(s.reg);
      close();
    }
    for (auto& x : s.body) {
      if (x.kind == Stmt::Def && defs.count(x.reg)) continue;
      emit(x);
    }
    line("if (ph_more) {");
    ++ind_;
    for (auto& [r, arr] : pre) {
      const VType& t = k_.regs[r].type;
      int64_t V = std::max<int64_t>(1, vec_width(r, defs.at(r)->value));
      int64_t items = t.numel() / V, n = (items + k_.threads - 1) / k_.threads;
      int64_t w = t.shape.back() / V;
      std::string T = std::to_string(k_.threads), W = std::to_string(w);
      line("#pragma unroll");
      line("for (int j = 0; j < " + std::to_string(n) + "; ++j) {");
      ++ind_;
      line("const int e_ = tid + j * " + T + ", r_ = e_ / " + W + ", c_ = (e_ % " + W + ") * " +
           std::to_string(V) + ";");
      line("(void)r_;");
      std::string at = smem_at(r, "(ph_stage ^ 1)", "r_", "c_", "e_");
      line("if (e_ < " + std::to_string(items) + ") " +
           (V > 1 ? "*reinterpret_cast<uint4*>(&" + at + ") = " + arr + "[j];"
                  : at + " = " + store_cast(t.dt, arr + "[j]") + ";"));
      close();
    }
    close();
    line("__syncthreads();");
    line("ph_stage ^= 1;");
    close();
    close();
  }

  void emit(const Stmt& s) {
    switch (s.kind) {
      case Stmt::Def:
        if (auto* d = dot_at(s))
          dot(*d);
        else
          def(s);
        return;
      case Stmt::Store:
        store(s);
        return;
      case Stmt::For:
        for_loop(s);
        return;
      case Stmt::If:
        line("if (" + elem(s.cond, "0", "0", "0") + ") {");
        ++ind_;
        block(s.body);
        if (!s.else_body.empty()) {
          --ind_;
          line("} else {");
          ++ind_;
          block(s.else_body);
        }
        close();
        return;
    }
  }

  void block(const std::vector<Stmt>& b) {
    for (auto& s : b) emit(s);
  }

  // Pass "barriers": two barriers with nothing between them are one.
  static std::string dedupe_barriers(const std::string& src) {
    std::string out;
    bool last_sync = false;
    size_t p = 0;
    while (p < src.size()) {
      size_t e = src.find('\n', p);
      if (e == std::string::npos) e = src.size();
      std::string ln = src.substr(p, e - p);
      bool sync = ln.find_first_not_of(' ') != std::string::npos &&
                  ln.substr(ln.find_first_not_of(' ')) == "__syncthreads();";
      if (!(sync && last_sync)) out += ln + "\n";
      if (ln.find_first_not_of(' ') != std::string::npos) last_sync = sync;
      p = e + 1;
    }
    return out;
  }
};

}  // namespace

std::string cuda_entry_name(const ir::Kernel& k) {
  std::string s = "phobos_" + k.name;
  for (auto& [n, v] : k.params) s += "_" + n + std::to_string(v);
  return s;
}

std::string emit_cuda(const Program&, const ir::Kernel& k) {
  Plan p = passes::plan_kernel(k);
  if (!p.error.empty()) throw Error("cannot lower '" + k.name + "' to CUDA: " + p.error);
  return Emitter(k, p).run();
}

}  // namespace phobos
