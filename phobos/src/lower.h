// Sema and inlining: walks the AST of one kernel instance and builds ir::Kernel.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "build.h"
#include "program.h"

namespace phobos {

struct Binding {
  enum Kind { Value, Reg, Tensor } kind = Value;
  Binding() = default;
  Binding(Kind k, ir::NodeP v, int r = -1, int t = -1)
      : kind(k), value(std::move(v)), reg(r), tensor(t) {}
  ir::NodeP value;  // Value: a pure expression, substituted at each use
  int reg = -1;     // Reg: a register (var, loop variable, materialized let)
  int tensor = -1;  // Tensor: kernel argument index
};

// What an expression lowers to: a value, or a reference to a tensor argument.
struct LVal {
  LVal(ir::NodeP n, int t = -1, int r = -1) : node(std::move(n)), tensor(t), reg(r) {}
  ir::NodeP node;
  int tensor = -1;
  int reg = -1;  // set when the expression is a plain variable name (for by-reference args)
};

class Lowerer {
 public:
  Lowerer(const Program& prog, ir::Kernel& k) : prog_(prog), k_(k) {}

  void push_frame();  // a fn body cannot see its caller's names
  void pop_frame();
  void push_scope();
  void pop_scope();
  void bind(const std::string& name, Binding b, Loc loc);
  const Binding* lookup(const std::string& name) const;

  int new_reg(const std::string& name, ir::VType t, bool mut);
  void lower_block(const std::vector<ast::StmtP>& body, std::vector<ir::Stmt>& out);
  LVal lower(const ast::Expr& e);
  ir::NodeP value(const ast::Expr& e);  // a value (error if it is a tensor)
  int64_t const_int(const ast::Expr& e, const char* what);
  ir::VType lower_type(const ast::TypeExpr& t);

  std::vector<ir::Stmt>* out = nullptr;  // where statements are appended
  bool in_kernel_frame() const { return frames_.size() == 1; }

 private:
  void stmt(const ast::Stmt& s);
  void let_var(const ast::Stmt& s);
  void assign(const ast::Stmt& s);
  void for_stmt(const ast::Stmt& s);
  ir::NodeP call(const ast::Expr& e, bool want_value);
  ir::NodeP builtin(const ast::Expr& e, bool* handled);
  ir::NodeP inline_fn(const ast::Fn& fn, const ast::Expr& call, bool want_value);
  ir::NodeP index(const ast::Expr& e);
  std::vector<ir::Slice> slices(const ast::Expr& e, const std::vector<int64_t>* tile_shape,
                                int tensor, std::vector<int64_t>& shape);
  ir::NodeP convert_to(ir::NodeP v, const ir::VType& t, Loc loc, const std::string& what);

  const Program& prog_;
  ir::Kernel& k_;
  std::vector<std::vector<std::map<std::string, Binding>>> frames_;
  std::vector<std::string> inline_stack_;
  std::map<std::string, int> name_count_;
  std::optional<DType> dot_hint_;  // accumulator type of the enclosing `acc += dot(...)`
};

}  // namespace phobos
