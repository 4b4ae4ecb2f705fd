// Tile IR -> portable C++ for ahead-of-time CPU use (`phobosc emit --target=cpp`).
//
// The output is one self-contained translation unit per instance (no Phobos headers needed):
// an `extern "C"` function with the kernel's tensors as storage pointers (float, uint16_t for
// f16/bf16 bits, int32_t, int8_t, uint8_t for bool), scalars as double, then one int64_t per
// dimension symbol. It mirrors the interpreter exactly — every value is a double rounded to its
// element type after each operation, a dot is accumulated in double and rounded once, reads out
// of range give 0 and writes out of range are dropped — so its results equal the interpreter's
// bit for bit (tests/phobos/cpp_aot_test.cpp). Tiles are std::vector<double> hoisted out of the
// grid loops; dots, reductions and tile slices are computed into temporaries before the
// elementwise loop that uses them.
#include <cmath>
#include <functional>

#include "../build.h"
#include "emit.h"

namespace phobos {

const char* cpp_prelude();

using ir::Node;
using ir::NodeP;
using ir::Op;
using ir::Stmt;
using ir::VType;

namespace {

const char* storage_type(DType t) {
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F16:
    case DType::BF16:
      return "uint16_t";
    case DType::I32:
      return "int32_t";
    case DType::I8:
      return "int8_t";
    case DType::Bool:
      return "uint8_t";
  }
  return "float";
}

std::string lit(double v) {
  if (v != v) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char b[40];
  snprintf(b, sizeof b, "%.17g", v);
  std::string s = b;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

class CppEmitter {
 public:
  explicit CppEmitter(const ir::Kernel& k) : k_(k) {}

  std::string run() {
    o_ = cpp_prelude();
    std::string name = cuda_entry_name(k_);
    o_ += "\n// " + k_.name + ": the grid runs sequentially; tiles are arrays of doubles\n";
    o_ += "extern \"C\" void " + name + "(";
    std::vector<std::string> ps;
    for (auto& a : k_.args)
      ps.push_back(a.is_tensor ? std::string(storage_type(a.dt)) + "* " + a.name
                               : "double " + a.name + "_in");
    for (auto& d : k_.dims) ps.push_back("int64_t d_" + d);
    for (size_t i = 0; i < ps.size(); ++i) o_ += (i ? ", " : "") + ps[i];
    o_ += ") {\n";
    for (auto& a : k_.args)
      if (!a.is_tensor)
        line("const double " + a.name + " = ph_round(" + dt(a.dt) + ", " + a.name + "_in);");
    for (size_t r = 0; r < k_.regs.size(); ++r) {
      const VType& t = k_.regs[r].type;
      line(t.scalar() ? "double " + reg(r) + " = 0;"
                      : "std::vector<double> " + reg(r) + "(" + std::to_string(t.numel()) + ");");
    }
    line("std::vector<double> ph_t;  // the value of a tile definition before it is assigned");
    for (int i = 0; i < 3; ++i)
      line("const int64_t ph_grid" + std::to_string(i) + " = (int64_t)" +
           elem(k_.grid[i], "0", "0") + ";");
    bool per_thread = false;
    std::function<void(const std::vector<Stmt>&)> scan = [&](const std::vector<Stmt>& b) {
      for (auto& s : b) {
        for (auto* n : {&s.value, &s.lo, &s.hi, &s.step, &s.cond})
          ir::walk_node(*n,
                        [&](const Node& x) { per_thread |= x.op == Op::Ctx && x.idx / 3 == 1; });
        for (auto& sl : s.slices)
          ir::walk_node(sl.start,
                        [&](const Node& x) { per_thread |= x.op == Op::Ctx && x.idx / 3 == 1; });
        scan(s.body);
        scan(s.else_body);
      }
    };
    scan(k_.body);
    line("for (int64_t ph_bz = 0; ph_bz < ph_grid2; ++ph_bz)");
    line("for (int64_t ph_by = 0; ph_by < ph_grid1; ++ph_by)");
    line("for (int64_t ph_bx = 0; ph_bx < ph_grid0; ++ph_bx)");
    line("for (int64_t ph_tx = 0; ph_tx < " +
         std::string(per_thread ? std::to_string(k_.threads) : "1") + "; ++ph_tx) {");
    ++ind_;
    block(k_.body);
    close();
    o_ += "}\n";
    return o_;
  }

 private:
  const ir::Kernel& k_;
  std::string o_;
  int ind_ = 1, tmp_ = 0;
  std::map<const Node*, std::string> temps_;  // dots, reductions, tile slices computed ahead

  void line(const std::string& s) { o_ += std::string(ind_ * 2, ' ') + s + "\n"; }
  void close() {
    --ind_;
    line("}");
  }
  std::string reg(size_t r) const {
    std::string s = "r_" + k_.regs[r].name;
    for (auto& c : s)
      if (c == '.') c = '_';
    return s;
  }
  static std::string dt(DType t) { return std::string("PH_") + dtype_name(t); }
  std::string dim(int t, size_t d) const {
    const ir::Arg& a = k_.args[t];
    return a.dims[d] < 0 ? std::to_string(a.dim_const[d]) : "d_" + k_.dims[a.dims[d]];
  }

  // Element (i, j) of a value of shape s (broadcast as the interpreter's `at`) in array x.
  static std::string at(const std::string& x, const std::vector<int64_t>& s, const std::string& i,
                        const std::string& j) {
    if (s.empty()) return x + "[0]";
    if (s.size() == 1) return x + "[" + (s[0] == 1 ? "0" : j) + "]";
    return x + "[(" + (s[0] == 1 ? "0" : i) + ") * " + std::to_string(s[1]) + " + (" +
           (s[1] == 1 ? "0" : j) + ")]";
  }

  // Tensor index, offset and in-range predicate of element (i, j) of a slice.
  void slice_addr(int t, const std::vector<ir::Slice>& sl, const std::string& i,
                  const std::string& j, std::string* off, std::string* pred) {
    int tiled = 0, axis = 0;
    for (auto& s : sl) tiled += !s.point;
    off->clear();
    pred->clear();
    for (size_t d = 0; d < sl.size(); ++d) {
      std::string idx = "(int64_t)" + elem(sl[d].start, "0", "0");
      if (!sl[d].point) idx = "(" + idx + " + " + (tiled == 2 && axis++ == 0 ? i : j) + ")";
      *off = off->empty() ? idx : "(" + *off + ") * " + dim(t, d) + " + " + idx;
      *pred += (pred->empty() ? "" : " && ") + idx + " >= 0 && " + idx + " < " + dim(t, d);
    }
  }

  // Element (i, j) of node n (a double expression); i/j are C++ expressions.
  std::string elem(const NodeP& n, const std::string& i, const std::string& j) {
    const VType& t = n->type;
    auto sub = [&](const NodeP& a) {
      const auto& s = a->type.shape;
      std::string ii = s.size() == 2 && s[0] == 1 ? "0" : i;
      std::string jj = !s.empty() && s.back() == 1 ? "0" : j;
      return elem(a, s.size() == 2 ? ii : "0", s.empty() ? "0" : jj);
    };
    if (temps_.count(n.get())) return at(temps_.at(n.get()), t.shape, i, j);
    switch (n->op) {
      case Op::Const:
        return lit(n->cval);
      case Op::Ctx: {
        static const char* v[3][3] = {
            {"ph_bx", "ph_by", "ph_bz"}, {"ph_tx", "0", "0"}, {"ph_grid0", "ph_grid1", "ph_grid2"}};
        return "(double)" + std::string(v[n->idx / 3][n->idx % 3]);
      }
      case Op::Dim:
        return "(double)d_" + k_.dims[n->idx];
      case Op::Param:
        return k_.args[n->idx].name;
      case Op::Reg:
        return t.scalar() ? reg(n->idx) : at(reg(n->idx), t.shape, i, j);
      case Op::Full:
        return elem(n->args[0], "0", "0");
      case Op::Load: {
        std::string off, pred;
        slice_addr(n->idx, n->slices, i, j, &off, &pred);
        return "(" + pred + " ? ph_load(" + dt(k_.args[n->idx].dt) + ", " + k_.args[n->idx].name +
               ", " + off + ") : 0.0)";
      }
      default:
        break;
    }
    std::string a = sub(n->args[0]);
    std::string b = n->args.size() > 1 ? sub(n->args[1]) : "0.0";
    bool fl = is_float(t.dt);
    std::string r;
    switch (n->op) {
      case Op::Neg:
        r = "(-" + a + ")";
        break;
      case Op::Not:
        r = "(double)(" + a + " == 0)";
        break;
      case Op::Add:
        r = "(" + a + " + " + b + ")";
        break;
      case Op::Sub:
        r = "(" + a + " - " + b + ")";
        break;
      case Op::Mul:
        r = "(" + a + " * " + b + ")";
        break;
      case Op::Div:
        r = fl ? "(" + a + " / " + b + ")" : "ph_idiv(" + a + ", " + b + ")";
        break;
      case Op::Mod:
        r = fl ? "std::fmod(" + a + ", " + b + ")" : "ph_imod(" + a + ", " + b + ")";
        break;
      case Op::Lt:
        return "(double)(" + a + " < " + b + ")";
      case Op::Le:
        return "(double)(" + a + " <= " + b + ")";
      case Op::Gt:
        return "(double)(" + a + " > " + b + ")";
      case Op::Ge:
        return "(double)(" + a + " >= " + b + ")";
      case Op::Eq:
        return "(double)(" + a + " == " + b + ")";
      case Op::Ne:
        return "(double)(" + a + " != " + b + ")";
      case Op::And:
        return "(double)((" + a + ") != 0 && (" + b + ") != 0)";
      case Op::Or:
        return "(double)((" + a + ") != 0 || (" + b + ") != 0)";
      case Op::Min:
        r = "ph_min(" + a + ", " + b + ")";
        break;
      case Op::Max:
        r = "ph_max(" + a + ", " + b + ")";
        break;
      case Op::Cdiv:
        r = "ph_cdiv(" + a + ", " + b + ")";
        break;
      case Op::Math:
        r = "ph_" + n->fn + "(" + a + ")";
        break;
      case Op::Cast:
        r = a;
        break;
      default:
        throw Error("internal: the C++ emitter cannot lower '" + std::string(ir::op_name(n->op)) +
                    "'");
    }
    if (t.weak && fl) return r;  // untyped literal arithmetic stays exact (as the interpreter)
    return "ph_round(" + dt(t.dt) + ", " + r + ")";
  }

  // Computes every dot, reduction and tile slice inside n into a temporary, innermost first.
  void hoist(const NodeP& n) {
    for (auto& a : n->args) hoist(a);
    bool tile_slice = n->op == Op::Load && n->idx < 0;
    if (n->op != Op::Dot && n->op != Op::DotT && n->op != Op::Reduce && !tile_slice) return;
    std::string t = "ph_v" + std::to_string(tmp_++);
    const VType& ty = n->type;
    line("std::vector<double> " + t + "(" + std::to_string(ty.numel()) + ", 0.0);");
    if (n->op == Op::Dot || n->op == Op::DotT) {
      int64_t R = n->args[0]->type.shape[0], K = n->args[0]->type.shape[1], C = ty.shape[1];
      line("for (int64_t i = 0; i < " + std::to_string(R) + "; ++i)");
      line("  for (int64_t j = 0; j < " + std::to_string(C) + "; ++j) {");
      line("    double s = 0;");
      std::string b = n->op == Op::DotT ? elem(n->args[1], "j", "q") : elem(n->args[1], "q", "j");
      line("    for (int64_t q = 0; q < " + std::to_string(K) +
           "; ++q) s += " + elem(n->args[0], "i", "q") + " * " + b + ";");
      line("    " + t + "[i * " + std::to_string(C) + " + j] = ph_round(" + dt(ty.dt) + ", s);");
      line("  }");
    } else if (n->op == Op::Reduce) {
      const auto& s = n->args[0]->type.shape;
      int64_t R = s.size() == 2 ? s[0] : 1, C = s.empty() ? 1 : s.back();
      bool rows = s.size() == 2 && n->axis == 0;
      int64_t outer = rows ? C : R, inner = rows ? R : C;
      std::string x = rows ? elem(n->args[0], "q", "o") : elem(n->args[0], "o", "q");
      std::string init = n->fn == "sum" ? "0.0" : n->fn == "max" ? "-INFINITY" : "INFINITY";
      line("for (int64_t o = 0; o < " + std::to_string(outer) + "; ++o) {");
      line("  double acc = " + init + ";");
      line("  for (int64_t q = 0; q < " + std::to_string(inner) + "; ++q) acc = ph_red_" + n->fn +
           "(acc, " + x + ");");
      line("  " + t + "[o] = ph_round(" + dt(ty.dt) + ", acc);");
      line("}");
    } else {
      // A slice of a tile value: element e of the result reads the source at start + offset.
      const auto& ss = n->args[0]->type.shape;
      int64_t rows = ty.shape.size() == 2 ? ty.shape[0] : 1,
              cols = ty.shape.empty() ? 1 : ty.shape.back();
      int tiled = 0, axis = 0;
      for (auto& s : n->slices) tiled += !s.point;
      std::string pred = "true", off = "0";
      for (size_t d = 0; d < n->slices.size(); ++d) {
        std::string idx = "(int64_t)" + elem(n->slices[d].start, "0", "0");
        if (!n->slices[d].point)
          idx = "(" + idx + " + " + (tiled == 2 && axis++ == 0 ? "i" : "j") + ")";
        pred += " && " + idx + " >= 0 && " + idx + " < " + std::to_string(ss[d]);
        off = "(" + off + ") * " + std::to_string(ss[d]) + " + " + idx;
      }
      std::string src = "ph_v" + std::to_string(tmp_++);
      line("std::vector<double> " + src + "(" + std::to_string(n->args[0]->type.numel()) + ");");
      line("for (int64_t e = 0; e < " + std::to_string(n->args[0]->type.numel()) + "; ++e) " + src +
           "[e] = " +
           elem(n->args[0], "(e / " + std::to_string(ss.size() == 2 ? ss[1] : 1) + ")",
                ss.size() == 2 ? "(e % " + std::to_string(ss[1]) + ")" : "e") +
           ";");
      line("for (int64_t i = 0; i < " + std::to_string(rows) + "; ++i)");
      line("  for (int64_t j = 0; j < " + std::to_string(cols) + "; ++j)");
      line("    if (" + pred + ") " + t + "[i * " + std::to_string(cols) + " + j] = " + src + "[" +
           off + "];");
    }
    temps_[n.get()] = t;
  }

  // Element (i, j) of a value spread over a target of a larger shape (NumPy broadcasting).
  std::string broadcast(const NodeP& v) {
    const auto& s = v->type.shape;
    std::string i = s.size() == 2 && s[0] != 1 ? "i" : "0";
    std::string j = !s.empty() && s.back() != 1 ? "j" : "0";
    return elem(v, i, j);
  }

  // Loops over the elements (i, j) of shape s, calling body inside.
  void each(const std::vector<int64_t>& s, const std::function<void()>& body) {
    int64_t R = s.size() == 2 ? s[0] : 1, C = s.empty() ? 1 : s.back();
    line("for (int64_t i = 0; i < " + std::to_string(R) + "; ++i)");
    line("  for (int64_t j = 0; j < " + std::to_string(C) + "; ++j) {");
    ind_ += 2;
    body();
    ind_ -= 2;
    line("  }");
  }

  void emit(const Stmt& s) {
    switch (s.kind) {
      case Stmt::Def: {
        line("{");
        ++ind_;
        hoist(s.value);
        const VType& t = k_.regs[s.reg].type;
        if (t.scalar()) {
          line(reg(s.reg) + " = " + elem(s.value, "0", "0") + ";");
        } else {
          line("ph_t.assign(" + std::to_string(t.numel()) + ", 0.0);");
          int64_t C = t.shape.back();
          std::string v = broadcast(s.value);
          each(t.shape, [&] { line("ph_t[i * " + std::to_string(C) + " + j] = " + v + ";"); });
          line(reg(s.reg) + ".swap(ph_t);");
        }
        temps_.clear();
        close();
        return;
      }
      case Stmt::Store: {
        line("{");
        ++ind_;
        hoist(s.value);
        std::vector<int64_t> shape;
        for (auto& sl : s.slices)
          if (!sl.point) shape.push_back(sl.len);
        std::string off, pred;
        slice_addr(s.tensor, s.slices, "i", "j", &off, &pred);
        std::string v = broadcast(s.value);
        each(shape, [&] {
          line("if (" + pred + ") ph_store(" + dt(k_.args[s.tensor].dt) + ", " +
               k_.args[s.tensor].name + ", " + off + ", " + v + ");");
        });
        temps_.clear();
        close();
        return;
      }
      case Stmt::For: {
        std::string v = "ph_i" + std::to_string(tmp_++);
        line("for (int64_t " + v + " = (int64_t)" + elem(s.lo, "0", "0") + "; " + v +
             " < (int64_t)" + elem(s.hi, "0", "0") + "; " + v + " += (int64_t)" +
             elem(s.step, "0", "0") + ") {");
        ++ind_;
        line(reg(s.reg) + " = (double)" + v + ";");
        block(s.body);
        close();
        return;
      }
      case Stmt::If:
        line("if ((" + elem(s.cond, "0", "0") + ") != 0) {");
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
};

}  // namespace

std::string emit_cpp(const Program&, const ir::Kernel& k) {
  return CppEmitter(k).run();
}

}  // namespace phobos
