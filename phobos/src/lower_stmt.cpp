// Statements, scopes and fn inlining (spec §2, §3).
#include "lower.h"

namespace phobos {

using namespace ir;

void Lowerer::push_frame() {
  frames_.push_back({{}});
}
void Lowerer::pop_frame() {
  frames_.pop_back();
}
void Lowerer::push_scope() {
  frames_.back().push_back({});
}
void Lowerer::pop_scope() {
  frames_.back().pop_back();
}

void Lowerer::bind(const std::string& name, Binding b, Loc loc) {
  auto& scope = frames_.back().back();
  if (scope.count(name)) throw CompileError(loc, "'" + name + "' is already defined in this scope");
  scope[name] = std::move(b);
}

const Binding* Lowerer::lookup(const std::string& name) const {
  const auto& frame = frames_.back();
  for (auto it = frame.rbegin(); it != frame.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return &f->second;
  }
  return nullptr;
}

int Lowerer::new_reg(const std::string& name, VType t, bool mut) {
  // Register names are unique in the kernel: a second `a` (another scope, another inlined
  // call) prints as `a.1`.
  int n = name_count_[name]++;
  std::string unique = n == 0 ? name : name + "." + std::to_string(n);
  t.weak = false;
  k_.regs.push_back({unique, t, mut});
  return static_cast<int>(k_.regs.size()) - 1;
}

VType Lowerer::lower_type(const ast::TypeExpr& t) {
  auto dt = dtype_from_name(t.dtype);
  if (!dt)
    throw CompileError(t.dtype_loc, "unknown element type '" + t.dtype +
                                        "' (expected f32, f16, bf16, i32, i8 or bool)");
  VType v{*dt, {}};
  if (t.kind == ast::TypeExpr::Tensor)
    throw CompileError(t.loc, "only kernel parameters can be tensors");
  if (t.kind == ast::TypeExpr::Tile) {
    if (t.dims.empty() || t.dims.size() > 2)
      throw CompileError(
          t.loc, "tiles have 1 or 2 dimensions, this one has " + std::to_string(t.dims.size()));
    for (auto& d : t.dims) {
      int64_t n = const_int(*d, "a tile extent");
      if (n <= 0)
        throw CompileError(d->loc, "a tile extent must be positive, got " + std::to_string(n));
      if (n > 65536)
        throw CompileError(d->loc, "tile extent " + std::to_string(n) + " is too large");
      v.shape.push_back(n);
    }
  }
  return v;
}

NodeP Lowerer::convert_to(NodeP v, const VType& t, Loc loc, const std::string& what) {
  auto b = broadcast(v->type.shape, t.shape);
  if (!b || *b != t.shape)
    throw CompileError(loc, what + ": a value of shape " + shape_str(v->type.shape) +
                                " does not fit shape " + shape_str(t.shape));
  if (v->type.dt == DType::Bool && t.dt != DType::Bool)
    throw CompileError(loc, what + ": cannot convert bool to " + std::string(dtype_name(t.dt)));
  v = cast(v, t.dt);
  if (v->type.shape != t.shape) v = full(v, t);
  return v;
}

void Lowerer::lower_block(const std::vector<ast::StmtP>& body, std::vector<Stmt>& o) {
  auto* save = out;
  out = &o;
  push_scope();
  for (auto& s : body) stmt(*s);
  pop_scope();
  out = save;
}

void Lowerer::stmt(const ast::Stmt& s) {
  switch (s.kind) {
    case ast::Stmt::Let:
    case ast::Stmt::Var:
      let_var(s);
      return;
    case ast::Stmt::Assign:
      assign(s);
      return;
    case ast::Stmt::For:
      for_stmt(s);
      return;
    case ast::Stmt::If: {
      NodeP c = value(*s.cond);
      if (c->type.dt != DType::Bool || !c->type.scalar())
        throw CompileError(s.cond->loc,
                           "an if condition must be a bool scalar, got " + type_str(c->type));
      Stmt st{Stmt::If, s.loc};
      st.cond = c;
      lower_block(s.body, st.body);
      lower_block(s.else_body, st.else_body);
      out->push_back(std::move(st));
      return;
    }
    case ast::Stmt::Return:
      throw CompileError(s.loc, in_kernel_frame() ? "'return' is not allowed in a kernel"
                                                  : "'return' must be the last statement of a fn");
    case ast::Stmt::ExprStmt: {
      if (s.value->kind != ast::Expr::Call)
        throw CompileError(s.value->loc, "this expression's value is unused");
      if (!prog_.find_fn(s.value->name) || lookup(s.value->name))
        throw CompileError(s.value->loc, "the value of '" + s.value->name + "(...)' is unused");
      call(*s.value, false);
      return;
    }
  }
}

void Lowerer::let_var(const ast::Stmt& s) {
  bool is_var = s.kind == ast::Stmt::Var;
  std::optional<VType> declared;
  if (s.type) declared = lower_type(*s.type);
  if (declared) dot_hint_ = declared->dt;
  LVal v = lower(*s.value);
  dot_hint_.reset();
  if (v.tensor >= 0) {
    if (is_var || declared)
      throw CompileError(s.value->loc,
                         "a var cannot hold a tensor; use 'let' to alias it or "
                         "read a slice");
    bind(s.name, {Binding::Tensor, nullptr, -1, v.tensor}, s.name_loc);
    return;
  }
  NodeP val = v.node;
  VType t = declared ? *declared : val->type;
  if (declared) val = convert_to(val, t, s.value->loc, "initializing '" + s.name + "'");
  if (!is_var && is_pure(val, k_.regs)) {
    // An immutable pure value is substituted at each use, like a fn argument: this is what
    // makes inlined and hand-written code print the same IR.
    bind(s.name, {Binding::Value, val}, s.name_loc);
    return;
  }
  int r = new_reg(s.name, t, is_var);
  Stmt st{Stmt::Def, s.loc};
  st.reg = r;
  st.value = cast(val, k_.regs[r].type.dt);
  out->push_back(std::move(st));
  bind(s.name, {Binding::Reg, nullptr, r}, s.name_loc);
}

void Lowerer::assign(const ast::Stmt& s) {
  static const std::map<std::string, Op> ops = {
      {"+=", Op::Add}, {"-=", Op::Sub}, {"*=", Op::Mul}, {"/=", Op::Div}};
  const ast::Expr& tgt = *s.target;
  if (tgt.kind == ast::Expr::Name) {
    const Binding* b = lookup(tgt.name);
    if (!b) throw CompileError(tgt.loc, "unknown name '" + tgt.name + "'");
    if (b->kind == Binding::Tensor)
      throw CompileError(tgt.loc,
                         "cannot assign to tensor '" + tgt.name + "'; assign to a slice of it");
    if (b->kind != Binding::Reg || !k_.regs[b->reg].mut)
      throw CompileError(tgt.loc, "cannot assign to '" + tgt.name + "': it is not a var");
    int r = b->reg;
    const VType& t = k_.regs[r].type;
    dot_hint_ = t.dt;
    NodeP v = value(*s.value);
    dot_hint_.reset();
    if (s.op != "=") v = binary(ops.at(s.op), make_leaf(Op::Reg, r, t), v, s.loc);
    Stmt st{Stmt::Def, s.loc};
    st.reg = r;
    st.value = convert_to(v, t, s.loc, "assigning to '" + tgt.name + "'");
    out->push_back(std::move(st));
    return;
  }
  // A slice of a tensor: a store (element type converted on store, spec §3).
  LVal base = lower(*tgt.args[0]);
  if (base.tensor < 0)
    throw CompileError(tgt.loc,
                       "only slices of tensors can be assigned; a tile is updated "
                       "whole (build it with arithmetic)");
  NodeP cur = index(tgt);
  dot_hint_ = is_float(cur->type.dt) ? DType::F32 : DType::I32;
  NodeP v = value(*s.value);
  dot_hint_.reset();
  if (s.op != "=") v = binary(ops.at(s.op), cur, v, s.loc);
  auto b = broadcast(v->type.shape, cur->type.shape);
  if (!b || *b != cur->type.shape)
    throw CompileError(s.loc, "storing a value of shape " + shape_str(v->type.shape) +
                                  " into a slice of shape " + shape_str(cur->type.shape));
  if (v->type.dt == DType::Bool && cur->type.dt != DType::Bool)
    throw CompileError(s.loc, "cannot store bool values into a " +
                                  std::string(dtype_name(cur->type.dt)) + " tensor");
  if (v->type.weak) v = cast(v, cur->type.dt);
  if (v->type.shape != cur->type.shape) v = full(v, {v->type.dt, cur->type.shape});
  Stmt st{Stmt::Store, s.loc};
  st.tensor = cur->idx;
  st.slices = cur->slices;
  st.value = v;
  out->push_back(std::move(st));
}

void Lowerer::for_stmt(const ast::Stmt& s) {
  Stmt st{Stmt::For, s.loc};
  auto int_scalar = [&](const ast::Expr& e, const char* what) {
    NodeP n = value(e);
    if (!n->type.scalar() || is_float(n->type.dt) || n->type.dt == DType::Bool)
      throw CompileError(
          e.loc, std::string(what) + " must be an integer scalar, got " + type_str(n->type));
    return cast(n, DType::I32);
  };
  st.lo = int_scalar(*s.lo, "a range bound");
  st.hi = int_scalar(*s.hi, "a range bound");
  st.step = s.step ? int_scalar(*s.step, "a range step") : int_const(1, false);
  auto step = ir::const_int(st.step);
  if (!step || *step <= 0)
    throw CompileError(s.step ? s.step->loc : s.loc,
                       "a range step must be a positive compile-time constant");
  if (s.unroll) {
    int64_t u = const_int(*s.unroll, "the unroll factor");
    if (u < 1 || u > 64)
      throw CompileError(s.unroll->loc,
                         "the unroll factor must be in 1..64, got " + std::to_string(u));
    st.unroll = static_cast<int>(u);
  }
  st.reg = new_reg(s.name, {DType::I32, {}}, false);
  auto* save = out;
  out = &st.body;
  push_scope();
  bind(s.name, {Binding::Reg, nullptr, st.reg}, s.name_loc);
  for (auto& b : s.body) stmt(*b);
  pop_scope();
  out = save;
  out->push_back(std::move(st));
}

NodeP Lowerer::inline_fn(const ast::Fn& fn, const ast::Expr& c, bool want_value) {
  if (c.args.size() != fn.params.size())
    throw CompileError(c.loc, "'" + fn.name + "' takes " + std::to_string(fn.params.size()) +
                                  " arguments, got " + std::to_string(c.args.size()));
  for (auto& n : inline_stack_)
    if (n == fn.name)
      throw CompileError(c.loc, "recursive call to '" + fn.name + "' (recursion is not allowed)");
  if (inline_stack_.size() > 64) throw CompileError(c.loc, "fn calls nested too deeply");
  // Arguments are evaluated at the call, in the caller's frame. A var or a tensor is passed
  // by reference (so `acc += ...` in matmul updates the caller's acc); a pure value is
  // substituted; anything else is computed once into a register.
  std::vector<Binding> binds;
  for (size_t i = 0; i < c.args.size(); ++i) {
    LVal v = lower(*c.args[i]);
    if (v.tensor >= 0)
      binds.push_back({Binding::Tensor, nullptr, -1, v.tensor});
    else if (v.reg >= 0)
      binds.push_back({Binding::Reg, nullptr, v.reg});
    else if (is_pure(v.node, k_.regs))
      binds.push_back({Binding::Value, v.node});
    else {
      int r = new_reg(fn.params[i].name, v.node->type, false);
      Stmt st{Stmt::Def, c.args[i]->loc};
      st.reg = r;
      st.value = cast(v.node, k_.regs[r].type.dt);
      out->push_back(std::move(st));
      binds.push_back({Binding::Reg, nullptr, r});
    }
  }
  inline_stack_.push_back(fn.name);
  auto saved_hint = dot_hint_;
  dot_hint_.reset();
  push_frame();
  for (size_t i = 0; i < binds.size(); ++i) bind(fn.params[i].name, binds[i], fn.params[i].loc);
  NodeP result;
  try {
    for (size_t i = 0; i < fn.body.size(); ++i) {
      const ast::Stmt& s = *fn.body[i];
      if (s.kind == ast::Stmt::Return && i + 1 == fn.body.size()) {
        if (s.value) result = value(*s.value);
        break;
      }
      stmt(s);
    }
  } catch (const CompileError& e) {
    std::string msg = e.what();
    if (msg.find(" (inlined from ") == std::string::npos && c.loc.file >= 0)
      msg += " (inlined from " + prog_.sm.name(c.loc.file) + ":" + std::to_string(c.loc.line) +
             ":" + std::to_string(c.loc.col) + ")";
    throw CompileError(e.loc, msg);
  }
  pop_frame();
  dot_hint_ = saved_hint;
  inline_stack_.pop_back();
  if (want_value && !result)
    throw CompileError(c.loc, "'" + fn.name + "' returns no value but is used as one");
  return result;
}

}  // namespace phobos
