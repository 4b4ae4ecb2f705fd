// Expressions: names, operators, slices and built-in functions (spec §3).
#include <cmath>
#include <set>

#include "lower.h"

namespace phobos {

using namespace ir;

LVal Lowerer::lower(const ast::Expr& e) {
  switch (e.kind) {
    case ast::Expr::Int:
      return {int_const(e.ival)};
    case ast::Expr::Float:
      return {float_const(e.fval)};
    case ast::Expr::Ctx: {
      int kind = e.name == "block" ? 0 : e.name == "thread" ? 1 : 2;
      return {make_leaf(Op::Ctx, kind * 3 + e.axis, {DType::I32, {}})};
    }
    case ast::Expr::Name: {
      const Binding* b = lookup(e.name);
      if (!b) {
        if (e.name == "inf") return {float_const(INFINITY)};
        if (e.name == "nan") return {float_const(NAN)};
        if (prog_.find_fn(e.name))
          throw CompileError(e.loc, "'" + e.name + "' is a fn; call it with arguments");
        throw CompileError(e.loc, "unknown name '" + e.name + "'");
      }
      if (b->kind == Binding::Tensor) return {nullptr, b->tensor};
      if (b->kind == Binding::Reg)
        return {make_leaf(Op::Reg, b->reg, k_.regs[b->reg].type), -1, b->reg};
      return {b->value};
    }
    case ast::Expr::Unary: {
      NodeP a = value(*e.args[0]);
      return {unary(e.name == "-" ? Op::Neg : Op::Not, a, e.loc)};
    }
    case ast::Expr::Binary: {
      static const std::map<std::string, Op> ops = {
          {"+", Op::Add}, {"-", Op::Sub},  {"*", Op::Mul}, {"/", Op::Div}, {"%", Op::Mod},
          {"<", Op::Lt},  {"<=", Op::Le},  {">", Op::Gt},  {">=", Op::Ge}, {"==", Op::Eq},
          {"!=", Op::Ne}, {"&&", Op::And}, {"||", Op::Or}};
      NodeP a = value(*e.args[0]);
      NodeP b = value(*e.args[1]);
      return {binary(ops.at(e.name), a, b, e.loc)};
    }
    case ast::Expr::Call:
      return {call(e, true)};
    case ast::Expr::Index: {
      const ast::Expr& base = *e.args[0];
      LVal bv = lower(base);
      if (bv.tensor < 0 && bv.node && !bv.node->type.scalar()) {
        std::vector<int64_t> shape;
        auto sl = slices(e, &bv.node->type.shape, -1, shape);
        auto n = std::make_shared<Node>();
        n->op = Op::Load;
        n->idx = -1;
        n->args = {bv.node};
        n->slices = std::move(sl);
        n->type = {bv.node->type.dt, shape};
        return {n};
      }
      if (bv.tensor < 0) throw CompileError(base.loc, "only tensors and tiles can be indexed");
      return {index(e)};
    }
  }
  throw CompileError(e.loc, "unsupported expression");
}

NodeP Lowerer::value(const ast::Expr& e) {
  LVal v = lower(e);
  if (v.tensor >= 0)
    throw CompileError(e.loc, "tensor '" + k_.args[v.tensor].name +
                                  "' is not a value here; read a slice of it, e.g. " +
                                  k_.args[v.tensor].name + "[i :+ n, j :+ m]");
  return v.node;
}

int64_t Lowerer::const_int(const ast::Expr& e, const char* what) {
  NodeP v = value(e);
  auto c = ir::const_int(v);
  if (!c) throw CompileError(e.loc, std::string(what) + " must be a compile-time integer constant");
  return *c;
}

NodeP Lowerer::index(const ast::Expr& e) {
  int t = lower(*e.args[0]).tensor;
  std::vector<int64_t> shape;
  auto sl = slices(e, nullptr, t, shape);
  auto n = std::make_shared<Node>();
  n->op = Op::Load;
  n->idx = t;
  n->slices = std::move(sl);
  n->type = {k_.args[t].dt, shape};
  return n;
}

std::vector<Slice> Lowerer::slices(const ast::Expr& e, const std::vector<int64_t>* tile_shape,
                                   int tensor, std::vector<int64_t>& shape) {
  size_t rank = tile_shape ? tile_shape->size() : k_.args[tensor].dims.size();
  std::string what = tile_shape ? "the tile" : "tensor '" + k_.args[tensor].name + "'";
  if (e.items.size() != rank)
    throw CompileError(e.loc, what + " has " + std::to_string(rank) + " dimension" +
                                  (rank == 1 ? "" : "s") + " but is indexed with " +
                                  std::to_string(e.items.size()));
  std::vector<Slice> out;
  for (size_t d = 0; d < rank; ++d) {
    const ast::SliceItem& it = e.items[d];
    Slice s;
    if (it.kind == ast::SliceItem::Full) {
      s.start = int_const(0);
      if (tile_shape) {
        s.len = (*tile_shape)[d];
      } else if (k_.args[tensor].dims[d] < 0) {
        s.len = k_.args[tensor].dim_const[d];
      } else {
        throw CompileError(it.loc, "':' over dimension " + k_.dims[k_.args[tensor].dims[d]] +
                                       " of '" + k_.args[tensor].name +
                                       "' needs a compile-time extent; write 'start :+ length'");
      }
    } else {
      s.start = value(*it.start);
      if (!s.start->type.scalar() ||
          (is_float(s.start->type.dt) || s.start->type.dt == DType::Bool))
        throw CompileError(it.start->loc,
                           "an index must be an integer scalar, got " + type_str(s.start->type));
      s.start = cast(s.start, DType::I32);
      if (it.kind == ast::SliceItem::Point) {
        s.point = true;
      } else {
        NodeP len = value(*it.len);
        auto c = ir::const_int(len);
        if (!c)
          throw CompileError(it.len->loc,
                             "a slice length must be a compile-time constant "
                             "(a literal, an autotune parameter or an extent)");
        if (*c <= 0)
          throw CompileError(it.len->loc,
                             "a slice length must be positive, got " + std::to_string(*c));
        if (*c > 65536)
          throw CompileError(it.len->loc, "slice length " + std::to_string(*c) +
                                              " is larger than a tile may be (65536)");
        s.len = *c;
      }
    }
    if (!s.point) shape.push_back(s.len);
    out.push_back(std::move(s));
  }
  if (shape.size() > 2)
    throw CompileError(e.loc,
                       "a slice yields a tile, and tiles have 1 or 2 dimensions; this one "
                       "has " +
                           std::to_string(shape.size()));
  return out;
}

NodeP Lowerer::call(const ast::Expr& e, bool want_value) {
  bool handled = false;
  NodeP r = builtin(e, &handled);
  if (handled) return r;
  if (const ast::Fn* fn = prog_.find_fn(e.name)) return inline_fn(*fn, e, want_value);
  throw CompileError(e.loc, "unknown function '" + e.name + "'");
}

static const std::set<std::string> kMath = {"exp",     "log",  "sqrt", "rsqrt", "tanh",
                                            "sigmoid", "gelu", "silu", "relu",  "abs"};

NodeP Lowerer::builtin(const ast::Expr& e, bool* handled) {
  *handled = true;
  const std::string& f = e.name;
  auto nargs = [&](size_t n) {
    if (e.args.size() != n)
      throw CompileError(e.loc, "'" + f + "' takes " + std::to_string(n) + " argument" +
                                    (n == 1 ? "" : "s") + ", got " + std::to_string(e.args.size()));
  };
  if (f == "extent") {
    nargs(2);
    LVal x = lower(*e.args[0]);
    int64_t d = const_int(*e.args[1], "the dimension of extent()");
    size_t rank = x.tensor >= 0 ? k_.args[x.tensor].dims.size() : x.node->type.shape.size();
    if (d < 0 || static_cast<size_t>(d) >= rank)
      throw CompileError(e.args[1]->loc, "extent(): dimension " + std::to_string(d) +
                                             " is out of range for rank " + std::to_string(rank));
    if (x.tensor < 0) return int_const(x.node->type.shape[d]);
    const ir::Arg& a = k_.args[x.tensor];
    if (a.dims[d] < 0) return int_const(a.dim_const[d]);
    return make_leaf(Op::Dim, a.dims[d], {DType::I32, {}});
  }
  if (f == "dot" || f == "dot_t") {
    nargs(2);
    NodeP a = value(*e.args[0]);
    NodeP b = value(*e.args[1]);
    for (auto* x : {&a, &b})
      if ((*x)->type.shape.size() != 2)
        throw CompileError(e.loc, "'" + f + "' needs 2-D tiles, got " + type_str((*x)->type));
    bool tr = f == "dot_t";
    int64_t ka = a->type.shape[1], kb = tr ? b->type.shape[1] : b->type.shape[0];
    if (ka != kb)
      throw CompileError(e.loc, "'" + f + "': inner extents differ: " + shape_str(a->type.shape) +
                                    (tr ? " @ transpose of " : " @ ") + shape_str(b->type.shape));
    if (a->type.dt != b->type.dt)
      throw CompileError(e.loc, "'" + f + "' operands have different element types: " +
                                    type_str(a->type) + " and " + type_str(b->type));
    if (a->type.dt == DType::Bool) throw CompileError(e.loc, "'" + f + "' of bool tiles");
    DType acc = dot_hint_ ? *dot_hint_ : is_float(a->type.dt) ? DType::F32 : DType::I32;
    if (is_float(acc) != is_float(a->type.dt))
      throw CompileError(e.loc, "'" + f + "' of " + dtype_name(a->type.dt) +
                                    " tiles cannot accumulate into " + dtype_name(acc));
    auto n = std::make_shared<Node>();
    n->op = tr ? Op::DotT : Op::Dot;
    n->type = {acc, {a->type.shape[0], tr ? b->type.shape[0] : b->type.shape[1]}};
    n->args = {a, b};
    return n;
  }
  if ((f == "sum" || f == "max" || f == "min") && e.args.size() == 2 &&
      e.args[1]->kind == ast::Expr::Int) {
    NodeP t = value(*e.args[0]);
    if (!t->type.scalar()) {
      int64_t ax = e.args[1]->ival;
      if (ax < 0 || static_cast<size_t>(ax) >= t->type.shape.size())
        throw CompileError(e.args[1]->loc, "'" + f + "': axis " + std::to_string(ax) +
                                               " is out of range for " + type_str(t->type));
      if (t->type.dt == DType::Bool) throw CompileError(e.loc, "'" + f + "' of a bool tile");
      auto n = std::make_shared<Node>();
      n->op = Op::Reduce;
      n->fn = f;
      n->axis = static_cast<int>(ax);
      n->type = t->type;
      n->type.shape[ax] = 1;
      n->args = {t};
      return n;
    }
    if (f == "sum") throw CompileError(e.loc, "'sum' needs a tile, got " + type_str(t->type));
  }
  if (f == "sum") {
    nargs(2);
    throw CompileError(e.args[1]->loc, "the axis of 'sum' must be an integer literal");
  }
  if (f == "min" || f == "max" || f == "cdiv") {
    nargs(2);
    NodeP a = value(*e.args[0]);
    NodeP b = value(*e.args[1]);
    return binary(f == "min" ? Op::Min : f == "max" ? Op::Max : Op::Cdiv, a, b, e.loc);
  }
  if (kMath.count(f)) {
    nargs(1);
    return math(f, value(*e.args[0]), e.loc);
  }
  if (auto dt = dtype_from_name(f)) {
    nargs(1);
    return cast(value(*e.args[0]), *dt);
  }
  *handled = false;
  return nullptr;
}

}  // namespace phobos
