// Tile IR + plan -> CUDA C++ (one __global__ per instance), for NVRTC.
//
// Register tiles are per-thread arrays laid out by the plan (SIMT blocks or mma.m16n8k16
// fragments); shared tiles are whole tiles in dynamic shared memory. Elementwise expressions are
// evaluated per owned element, so an epilogue after matmul is fused into the store (C read once,
// written once). Barriers are inserted conservatively around shared-memory writes and the
// duplicates removed (pass "barriers"); under @aligned the named dimensions have no edge checks.
#include "emit_cuda.h"

#include <cmath>
#include <functional>

namespace phobos {

const char* cuda_prelude();

namespace cuda_emit {

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

void CudaEmitter::sync() {
  if (p_.wgmma) line("ph_fence_proxy_async();");
  line(bar_);
}

std::string CudaEmitter::run() {
  o_ = cuda_prelude();
  if (p_.wgmma) o_ += "#include \"wgmma.cuh\"\n";
  if (p_.ws) {
    o_ += "#include \"tma.cuh\"\n";
    bar_ = "tc::tile::named_barrier_sync(1, " + std::to_string(k_.threads) + ");";
  }
  o_ += "\n// " + k_.name + ": " + std::to_string(k_.threads) + " threads, " +
        std::to_string(p_.smem_bytes) + " bytes of shared memory\n";
  o_ += "extern \"C\" __global__ void __launch_bounds__(" +
        (p_.ws ? std::to_string(k_.threads + 128) + ", 1" : std::to_string(k_.threads)) + ") " +
        cuda_entry_name(k_) + "(";
  std::vector<std::string> params;
  for (auto& a : k_.args)
    params.push_back(a.is_tensor ? std::string(ctype(a.dt)) + "* __restrict__ " + a.name
                                 : std::string(compute_type(a.dt)) + " " + a.name);
  for (auto& d : k_.dims) params.push_back("int d_" + d);
  for (auto& t : p_.tma)
    params.push_back("const __grid_constant__ tc::tile::TmaMap ph_map_" + cname(k_, t.reg));
  for (size_t i = 0; i < params.size(); ++i) o_ += (i ? ", " : "") + params[i];
  o_ += ") {\n";
  line("const int tid = (int)threadIdx.x;");
  line("(void)tid;");
  if (!p_.smem.empty() && p_.swizzle.empty())
    line("extern __shared__ __align__(16) unsigned char ph_smem[];");
  if (!p_.swizzle.empty()) {
    // Swizzled tiles need 1024-byte alignment (the plan reserved the slack).
    line("extern __shared__ __align__(16) unsigned char ph_smem_raw[];");
    line(
        "unsigned char* ph_smem = ph_smem_raw + ((1024u - (tc::tile::smem_addr(ph_smem_raw) & "
        "1023u)) & 1023u);");
  }
  std::map<int, int64_t> offsets;
  passes::smem_layout(k_, p_, p_.stages, &offsets);
  for (int r : p_.smem) {
    const VType& t = k_.regs[r].type;
    int64_t n = p_.double_buffered.count(r) ? p_.stages : 1;
    line(std::string(ctype(t.dt)) + "* " + cname(k_, r) + " = reinterpret_cast<" + ctype(t.dt) +
         "*>(ph_smem + " + std::to_string(offsets.at(r)) + ");  // " + ir::type_str(t) +
         (n > 1 ? " x " + std::to_string(n) + " stages" : ""));
  }
  if (p_.ws) ws_frame();
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
  if (p_.ws) {
    // Persistent: this CTA walks the logical grid; the ring's stage and phase carry over.
    line("int ph_stage = 0, ph_prev = -1;");
    line("unsigned ph_phase = 0;");
    line("for (int ph_t = blockIdx.x; ph_t < ph_tiles; ph_t += gridDim.x) {");
    ++ind_;
    ws_decode();
    block(k_.body);
    close();
  } else {
    block(k_.body);
  }
  o_ += "}\n";
  return dedupe_barriers(o_);
}

std::set<int> CudaEmitter::loop_vars() const {
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

std::string CudaEmitter::flit(double v) {
  if (v != v) return "__int_as_float(0x7fc00000)";
  if (v == INFINITY) return "__int_as_float(0x7f800000)";
  if (v == -INFINITY) return "__int_as_float(0xff800000)";
  char b[48];
  snprintf(b, sizeof b, "%.9gf", v);
  std::string s = b;
  if (s.find_first_of(".en") == std::string::npos) s.insert(s.size() - 1, ".0");
  return s;
}

std::string CudaEmitter::round(DType dt, const std::string& e) {
  if (dt == DType::F16) return "ph_rh(" + e + ")";
  if (dt == DType::BF16) return "ph_rb(" + e + ")";
  return e;
}

// Dimension d of tensor argument t as a C expression.
std::string CudaEmitter::dim(int t, size_t d) const {
  const ir::Arg& a = k_.args[t];
  return a.dims[d] < 0 ? std::to_string(a.dim_const[d]) : "d_" + k_.dims[a.dims[d]];
}

// Offset and in-bounds predicate ("" when unchecked) of element (r, c) of a tensor load.
void CudaEmitter::load_addr(const Node& n, const std::string& r, const std::string& c,
                            const std::string& i, std::string* off, std::string* pred) {
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

// Element (r, c) of node n; r/c are C expressions ("0" for absent axes).
std::string CudaEmitter::elem(const NodeP& n, const std::string& r, const std::string& c,
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
      // Persistent (ws): the logical block and grid of the tile being computed.
      if (p_.ws && n->idx / 3 != 1)
        return std::string(n->idx / 3 == 0 ? "ph_b" : "ph_g") + char('x' + n->idx % 3);
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
        std::string idx = t.shape.size() == 1 ? c : smem_idx(n->idx, r, c);
        std::string base =
            cname(k_, n->idx) + (p_.double_buffered.count(n->idx)
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
  bool fl = is_float(t.dt) ||
            (ir::is_cmp(n->op) && (is_float(n->args[0]->type.dt) || is_float(n->args[1]->type.dt)));
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
std::string CudaEmitter::simt_col(const Layout& l, const std::string& jj) {
  std::string tc = std::to_string(l.tc), gc = std::to_string(l.gc);
  if (l.gc == 1) return "tid % " + tc + " + " + jj + " * " + tc;
  return "(tid % " + tc + ") * " + gc + " + " + jj + " % " + gc + " + (" + jj + " / " + gc +
         ") * " + std::to_string(l.tc * l.gc);
}

// Opens a loop over the elements this thread owns under layout l; defines r, c, i.
void CudaEmitter::open_owned(const Layout& l, std::string* r, std::string* c, std::string* i) {
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
  } else if (l.kind == Layout::Wgmma) {
    // m64nN accumulator (tile library, wgmma.cuh; maps in mma_map.inc)
    line("const int " + *r + " = ph_wg_row(tid, " + *i + ");");
    line("const int " + *c + " = ph_wg_col(tid, " + *i + ");");
  } else {
    std::string wr = "(tid / 32 / " + std::to_string(l.wn) + ")",
                wc = "(tid / 32 % " + std::to_string(l.wn) + ")";
    line("const int " + *r + " = " + wr + " * " + std::to_string(l.R / l.wm) + " + (" + *i + " / " +
         std::to_string(l.ni * 4) + ") * 16 + ph_c_row(tid % 32, " + *i + " % 4);");
    line("const int " + *c + " = " + wc + " * " + std::to_string(l.C / l.wn) + " + ((" + *i +
         " / 4) % " + std::to_string(l.ni) + ") * 8 + ph_c_col(tid % 32, " + *i + " % 4);");
  }
  line("(void)" + *r + ";");
  line("(void)" + *c + ";");
}

void CudaEmitter::close() {
  --ind_;
  line("}");
}

// The layout of the first register tile in n (to iterate a store over), if any.
const Layout* CudaEmitter::frag_layout(const NodeP& n) const {
  const Layout* l = nullptr;
  ir::walk_node(n, [&](const Node& x) {
    if (!l && x.op == Op::Reg && p_.frag.count(x.idx)) l = &p_.frag.at(x.idx);
  });
  return l;
}

// Cooperative loop over every element of a tile of this shape.
void CudaEmitter::open_all(const std::vector<int64_t>& shape, std::string* r, std::string* c,
                           std::string* e) {
  int64_t C = shape.back(), n = 1;
  for (auto s : shape) n *= s;
  *e = fresh("e");
  *r = fresh("r");
  *c = fresh("c");
  line("for (int " + *e + " = tid; " + *e + " < " + std::to_string(n) + "; " + *e +
       " += " + std::to_string(k_.threads) + ") {");
  ++ind_;
  line("const int " + *r + " = " + *e + " / " + std::to_string(C) + ", " + *c + " = " + *e + " % " +
       std::to_string(C) + ";");
  line("(void)" + *r + ";");
  line("(void)" + *c + ";");
}

std::string CudaEmitter::store_cast(DType dt, const std::string& v) {
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

void CudaEmitter::def(const Stmt& s) {
  const VType& t = k_.regs[s.reg].type;
  if (t.scalar()) {
    line(cname(k_, s.reg) + " = " + elem(s.value, "0", "0", "0") + ";");
    return;
  }
  if (p_.smem.count(s.reg)) {
    line(bar_);
    smem_fill(s.reg, s.value, p_.double_buffered.count(s.reg) ? "ph_stage" : "");
    sync();
    return;
  }
  const Layout& l = p_.frag.at(s.reg);
  std::string r, c, i;
  open_owned(l, &r, &c, &i);
  line(cname(k_, s.reg) + "[" + i + "] = " + elem(s.value, r, c, i) + ";");
  close();
}

const passes::DotSite* CudaEmitter::dot_at(const Stmt& s) const {
  for (auto& d : p_.dots)
    if (d.def == &s) return &d;
  return nullptr;
}

void CudaEmitter::store(const Stmt& s) {
  const NodeP& v = s.value;
  std::vector<int64_t> shape = v->type.shape;
  std::string r, c, e;
  const Layout* l = frag_layout(v);
  if (l && shape.size() == 2 && l->R == shape[0] && l->C == shape[1] && pair_store(s, *l)) return;
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

void CudaEmitter::emit(const Stmt& s) {
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

void CudaEmitter::block(const std::vector<Stmt>& b) {
  for (auto& s : b) emit(s);
}

// Pass "barriers": two barriers with nothing between them are one.
std::string CudaEmitter::dedupe_barriers(const std::string& src) const {
  std::string out;
  bool last_sync = false;
  size_t p = 0;
  while (p < src.size()) {
    size_t e = src.find('\n', p);
    if (e == std::string::npos) e = src.size();
    std::string ln = src.substr(p, e - p);
    bool sync = ln.find_first_not_of(' ') != std::string::npos &&
                ln.substr(ln.find_first_not_of(' ')) == bar_;
    if (!(sync && last_sync)) out += ln + "\n";
    if (ln.find_first_not_of(' ') != std::string::npos) last_sync = sync;
    p = e + 1;
  }
  return out;
}

}  // namespace cuda_emit

std::string cuda_entry_name(const ir::Kernel& k) {
  std::string s = "phobos_" + k.name;
  for (auto& [n, v] : k.params) s += "_" + n + std::to_string(v);
  return s;
}

std::string emit_cuda(const Program&, const ir::Kernel& k, int arch, bool tma) {
  passes::Plan p = passes::plan_kernel(k, arch, tma);
  if (!p.error.empty()) throw Error("cannot lower '" + k.name + "' to CUDA: " + p.error);
  return cuda_emit::CudaEmitter(k, p).run();
}

}  // namespace phobos
