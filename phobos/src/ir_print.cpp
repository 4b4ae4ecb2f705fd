// Text form of the tile IR (`phobosc emit --target=ir`, the golden files).
#include <cmath>
#include <cstdio>

#include "build.h"

namespace phobos::ir {

std::string type_str(const VType& t) {
  std::string s = dtype_name(t.dt);
  if (t.scalar()) return t.weak ? "literal " + s : s;
  return "tile<" + s + ">" + shape_str(t.shape);
}

static std::string num(double v, DType dt, bool weak) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  if (!is_float(dt) && !(weak && is_float(dt))) {
    snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    return buf;
  }
  snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string print_expr(const Kernel& k, const NodeP& n) {
  static const char* ctx[3] = {"block", "thread", "grid"};
  switch (n->op) {
    case Op::Const:
      return num(n->cval, n->type.dt, n->type.weak);
    case Op::Ctx:
      return std::string(ctx[n->idx / 3]) + "." + char('x' + n->idx % 3);
    case Op::Dim:
      return k.dims[n->idx];
    case Op::Param:
      return k.args[n->idx].name;
    case Op::Reg:
      return "%" + k.regs[n->idx].name;
    case Op::Math:
      return n->fn + "(" + print_expr(k, n->args[0]) + ")";
    case Op::Cast:
      return std::string(dtype_name(n->type.dt)) + "(" + print_expr(k, n->args[0]) + ")";
    case Op::Full:
      return "full" + shape_str(n->type.shape) + "(" + print_expr(k, n->args[0]) + ")";
    case Op::Reduce:
      return n->fn + "(" + print_expr(k, n->args[0]) + ", axis " + std::to_string(n->axis) + ")";
    case Op::Dot:
    case Op::DotT:
      return std::string(op_name(n->op)) + "<" + dtype_name(n->type.dt) + ">(" +
             print_expr(k, n->args[0]) + ", " + print_expr(k, n->args[1]) + ")";
    case Op::Load: {
      std::string s =
          "load " + (n->idx >= 0 ? k.args[n->idx].name : print_expr(k, n->args[0])) + "[";
      for (size_t i = 0; i < n->slices.size(); ++i) {
        const Slice& sl = n->slices[i];
        s += (i ? ", " : "") + print_expr(k, sl.start);
        if (!sl.point) s += " :+ " + std::to_string(sl.len);
      }
      return s + "]";
    }
    case Op::Neg:
      return "-" + print_expr(k, n->args[0]);
    case Op::Not:
      return "!" + print_expr(k, n->args[0]);
    case Op::Min:
    case Op::Max:
    case Op::Cdiv:
      return std::string(op_name(n->op)) + "(" + print_expr(k, n->args[0]) + ", " +
             print_expr(k, n->args[1]) + ")";
    default: {
      static const char* sym[] = {
          "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"};
      int i = static_cast<int>(n->op) - static_cast<int>(Op::Add);
      return "(" + print_expr(k, n->args[0]) + " " + sym[i] + " " + print_expr(k, n->args[1]) + ")";
    }
  }
}

static void print_body(const Kernel& k, const std::vector<Stmt>& body, int ind, std::string& o,
                       std::vector<bool>& seen) {
  std::string pad(ind * 2, ' ');
  for (auto& s : body) {
    switch (s.kind) {
      case Stmt::Def: {
        const Reg& r = k.regs[s.reg];
        // The first definition carries the type; later ones are plain updates.
        if (seen[s.reg])
          o += pad + "%" + r.name + " = " + print_expr(k, s.value) + "\n";
        else
          o += pad + "%" + r.name + ": " + type_str(r.type) + (r.mut ? " var" : "") + " = " +
               print_expr(k, s.value) + "\n";
        seen[s.reg] = true;
        break;
      }
      case Stmt::Store: {
        o += pad + "store " + k.args[s.tensor].name + "[";
        for (size_t i = 0; i < s.slices.size(); ++i) {
          o += (i ? ", " : "") + print_expr(k, s.slices[i].start);
          if (!s.slices[i].point) o += " :+ " + std::to_string(s.slices[i].len);
        }
        o += "] = " + print_expr(k, s.value) + " : " + type_str(s.value->type) + "\n";
        break;
      }
      case Stmt::For:
        o += pad + "for %" + k.regs[s.reg].name + " in range(" + print_expr(k, s.lo) + ", " +
             print_expr(k, s.hi) + ", " + print_expr(k, s.step) + ")" +
             (s.unroll > 1 ? " unroll " + std::to_string(s.unroll) : "") + " {\n";
        print_body(k, s.body, ind + 1, o, seen);
        o += pad + "}\n";
        break;
      case Stmt::If:
        o += pad + "if " + print_expr(k, s.cond) + " {\n";
        print_body(k, s.body, ind + 1, o, seen);
        if (!s.else_body.empty()) {
          o += pad + "} else {\n";
          print_body(k, s.else_body, ind + 1, o, seen);
        }
        o += pad + "}\n";
        break;
    }
  }
}

std::string print(const Kernel& k) {
  std::string o = "kernel " + k.name;
  if (!k.params.empty()) {
    o += " [";
    for (size_t i = 0; i < k.params.size(); ++i)
      o += (i ? ", " : "") + k.params[i].first + "=" + std::to_string(k.params[i].second);
    o += "]";
  }
  o += "\n";
  for (auto& a : k.args) {
    o += "  arg " + a.name + ": ";
    if (!a.is_tensor) {
      o += std::string(dtype_name(a.dt)) + "\n";
      continue;
    }
    o += "tensor<" + std::string(dtype_name(a.dt)) + ">[";
    for (size_t i = 0; i < a.dims.size(); ++i)
      o += (i ? ", " : "") + (a.dims[i] < 0 ? std::to_string(a.dim_const[i]) : k.dims[a.dims[i]]);
    o += "]\n";
  }
  o += "  threads " + std::to_string(k.threads) + (k.threads_explicit ? "" : " (default)") + "\n";
  o += "  grid (" + print_expr(k, k.grid[0]) + ", " + print_expr(k, k.grid[1]) + ", " +
       print_expr(k, k.grid[2]) + ")\n";
  for (auto& a : k.aligned)
    o += "  aligned " + k.dims[a.dim] + " % " + std::to_string(a.multiple) + " == 0\n";
  if (k.pipeline) o += "  pipeline\n";
  if (k.tensorcore) o += "  tensorcore\n";
  o += "{\n";
  std::vector<bool> seen(k.regs.size(), false);
  print_body(k, k.body, 1, o, seen);
  o += "}\n";
  return o;
}

}  // namespace phobos::ir
