#include "build.h"

#include <cmath>

#include "eval_scalar.h"

namespace phobos::ir {

NodeP make_const(double v, VType t) {
  auto n = std::make_shared<Node>();
  n->op = Op::Const;
  n->type = t;
  n->cval = t.weak && is_float(t.dt) ? v : round_to(t.dt, v);
  return n;
}
NodeP int_const(int64_t v, bool weak) {
  return make_const(double(v), {DType::I32, {}, weak});
}
NodeP float_const(double v, bool weak) {
  return make_const(v, {DType::F32, {}, weak});
}
NodeP make_leaf(Op op, int idx, VType t) {
  auto n = std::make_shared<Node>();
  n->op = op;
  n->idx = idx;
  n->type = std::move(t);
  return n;
}

std::optional<int64_t> const_int(const NodeP& n) {
  if (n && n->op == Op::Const && n->type.scalar() && !is_float(n->type.dt) &&
      n->type.dt != DType::Bool)
    return static_cast<int64_t>(n->cval);
  return std::nullopt;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

std::optional<std::vector<int64_t>> broadcast(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    // Right-aligned as in NumPy: a [C] tile spreads over the rows of an [R, C] tile.
    int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = std::max(x, y);
  }
  return out;
}

DType promote(const VType& a, const VType& b, Loc loc, const char* what) {
  if (a.dt == DType::Bool || b.dt == DType::Bool)
    throw CompileError(loc, std::string("'") + what + "' needs numbers, not bool");
  if (a.weak && !b.weak) return is_float(a.dt) && !is_float(b.dt) ? DType::F32 : b.dt;
  if (b.weak && !a.weak) return is_float(b.dt) && !is_float(a.dt) ? DType::F32 : a.dt;
  if (a.dt == b.dt) return a.dt;
  bool fa = is_float(a.dt), fb = is_float(b.dt);
  if (fa && fb) {
    if (a.dt == DType::F32 || b.dt == DType::F32) return DType::F32;
    throw CompileError(loc, std::string("'") + what +
                                "' mixes f16 and bf16; cast one side "
                                "with f16(), bf16() or f32()");
  }
  if (fa) return a.dt;
  if (fb) return b.dt;
  return DType::I32;  // i8 with i32
}

bool is_cmp(Op op) {
  return op >= Op::Lt && op <= Op::Ne;
}

const char* op_name(Op op) {
  switch (op) {
    case Op::Neg:
      return "neg";
    case Op::Not:
      return "not";
    case Op::Add:
      return "add";
    case Op::Sub:
      return "sub";
    case Op::Mul:
      return "mul";
    case Op::Div:
      return "div";
    case Op::Mod:
      return "mod";
    case Op::Lt:
      return "lt";
    case Op::Le:
      return "le";
    case Op::Gt:
      return "gt";
    case Op::Ge:
      return "ge";
    case Op::Eq:
      return "eq";
    case Op::Ne:
      return "ne";
    case Op::And:
      return "and";
    case Op::Or:
      return "or";
    case Op::Min:
      return "min";
    case Op::Max:
      return "max";
    case Op::Cdiv:
      return "cdiv";
    case Op::Cast:
      return "cast";
    case Op::Full:
      return "full";
    case Op::Load:
      return "load";
    case Op::Dot:
      return "dot";
    case Op::DotT:
      return "dot_t";
    case Op::Reduce:
      return "reduce";
    default:
      return "?";
  }
}

static const char* op_symbol(Op op) {
  switch (op) {
    case Op::Add:
      return "+";
    case Op::Sub:
      return "-";
    case Op::Mul:
      return "*";
    case Op::Div:
      return "/";
    case Op::Mod:
      return "%";
    case Op::And:
      return "&&";
    case Op::Or:
      return "||";
    case Op::Min:
      return "min";
    case Op::Max:
      return "max";
    case Op::Cdiv:
      return "cdiv";
    default:
      return "comparison";
  }
}

NodeP binary(Op op, NodeP a, NodeP b, Loc loc) {
  auto shape = broadcast(a->type.shape, b->type.shape);
  if (!shape)
    throw CompileError(loc, std::string("shapes ") + shape_str(a->type.shape) + " and " +
                                shape_str(b->type.shape) + " do not broadcast in '" +
                                op_symbol(op) + "'");
  VType t;
  t.shape = *shape;
  if (op == Op::And || op == Op::Or) {
    if (a->type.dt != DType::Bool || b->type.dt != DType::Bool)
      throw CompileError(loc, std::string("'") + op_symbol(op) + "' needs bool operands, got " +
                                  type_str(a->type) + " and " + type_str(b->type));
    t.dt = DType::Bool;
  } else {
    DType d = promote(a->type, b->type, loc, op_symbol(op));
    if ((op == Op::Cdiv) && is_float(d))
      throw CompileError(loc, "cdiv needs integer operands, got " + type_str(a->type) + " and " +
                                  type_str(b->type));
    t.dt = is_cmp(op) ? DType::Bool : d;
    t.weak = a->type.weak && b->type.weak && t.shape.empty() && !is_cmp(op);
    if (!is_cmp(op) && !is_float(d) && (op == Op::Div || op == Op::Mod || op == Op::Cdiv)) {
      if (auto z = const_int(b); z && *z == 0) throw CompileError(loc, "division by zero");
    }
    if (is_cmp(op)) {
      // Compare in the promoted type: carry it on the operands.
      if (a->type.dt != d && !a->type.weak) a = cast(a, d);
      if (b->type.dt != d && !b->type.weak) b = cast(b, d);
    }
  }
  auto n = std::make_shared<Node>();
  n->op = op;
  n->type = t;
  n->args = {a, b};
  if (a->op == Op::Const && b->op == Op::Const)
    return make_const(eval_scalar_op(*n, a->cval, b->cval), t);
  // x * 1, x + 0: keep the IR of inlined code identical to code written by hand either way.
  if (t.dt == a->type.dt && t.shape == a->type.shape && b->op == Op::Const) {
    if ((op == Op::Mul || op == Op::Div) && b->cval == 1) return a;
    if ((op == Op::Add || op == Op::Sub) && b->cval == 0 && !is_float(t.dt)) return a;
  }
  if (t.dt == b->type.dt && t.shape == b->type.shape && a->op == Op::Const) {
    if (op == Op::Mul && a->cval == 1) return b;
    if (op == Op::Add && a->cval == 0 && !is_float(t.dt)) return b;
  }
  return n;
}

NodeP unary(Op op, NodeP a, Loc loc) {
  if (op == Op::Not && a->type.dt != DType::Bool)
    throw CompileError(loc, "'!' needs a bool operand, got " + type_str(a->type));
  if (op == Op::Neg && a->type.dt == DType::Bool)
    throw CompileError(loc, "unary '-' needs a number, got bool");
  auto n = std::make_shared<Node>();
  n->op = op;
  n->type = a->type;
  n->args = {a};
  if (a->op == Op::Const) return make_const(eval_scalar_op(*n, a->cval, 0), n->type);
  return n;
}

NodeP math(const std::string& fn, NodeP a, Loc loc) {
  bool int_ok = fn == "abs" || fn == "relu";
  if (a->type.dt == DType::Bool || (!int_ok && !is_float(a->type.dt) && !a->type.weak))
    throw CompileError(loc,
                       "'" + fn + "' needs a floating-point operand, got " + type_str(a->type));
  auto n = std::make_shared<Node>();
  n->op = Op::Math;
  n->fn = fn;
  n->type = a->type;
  if (a->type.weak && !int_ok) n->type.dt = DType::F32;
  n->args = {a};
  if (a->op == Op::Const) return make_const(eval_scalar_op(*n, a->cval, 0), n->type);
  return n;
}

NodeP cast(NodeP a, DType dt) {
  if (a->type.dt == dt && !a->type.weak) return a;
  VType t = a->type;
  t.dt = dt;
  t.weak = false;
  if (a->op == Op::Const) return make_const(a->cval, t);
  auto n = std::make_shared<Node>();
  n->op = Op::Cast;
  n->type = t;
  n->args = {a};
  return n;
}

NodeP full(NodeP scalar, VType tile) {
  auto n = std::make_shared<Node>();
  n->op = Op::Full;
  n->type = tile;
  n->args = {cast(scalar, tile.dt)};
  return n;
}

bool is_pure(const NodeP& n, const std::vector<Reg>& regs) {
  bool pure = true;
  walk_node(n, [&](const Node& x) {
    if (x.op == Op::Load || (x.op == Op::Reg && regs[x.idx].mut)) pure = false;
  });
  return pure;
}

}  // namespace phobos::ir
