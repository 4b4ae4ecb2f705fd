// The tile IR: one kernel instance (autotune parameters bound) after sema and inlining.
//
// Scalar index arithmetic is kept as pure expression trees (so `let pm = ctx.block.x` and a
// fn parameter bound to `pm * TILE_M` print exactly like the expression written in place —
// this is what makes inlining exact, spec §5). Tile values live in registers; statements are
// Def (write a register), Store (write a tensor slice), For and If.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "phobos/diag.h"
#include "phobos/dtype.h"

namespace phobos::ir {

// A value type: scalar when `shape` is empty, else a tile of rank 1 or 2.
struct VType {
  DType dt = DType::F32;
  std::vector<int64_t> shape;
  bool weak = false;  // an untyped literal: adopts the other operand's type
  bool scalar() const { return shape.empty(); }
  int64_t numel() const {
    int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
};
std::string type_str(const VType& t);

enum class Op {
  Const,
  Ctx,
  Dim,
  Param,
  Reg,  // leaves
  Neg,
  Not,
  Add,
  Sub,
  Mul,
  Div,
  Mod,  // arithmetic
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,    // comparison / logic
  Math,  // unary elementwise fn (name in `fn`)
  Min,
  Max,
  Cdiv,
  Cast,
  Full,  // binary elementwise, ceil-div, cast, splat
  Load,
  Dot,
  DotT,
  Reduce,  // tile ops
};

struct Node;
using NodeP = std::shared_ptr<const Node>;

struct Slice {
  bool point = false;  // a single index: drops the dimension
  NodeP start;
  int64_t len = 1;
};

struct Node {
  Op op;
  VType type;
  double cval = 0;  // Const
  int idx = 0;      // Ctx: kind*3+axis (0 block, 1 thread, 2 grid); Dim/Param/Reg/Load arg
  int axis = 0;     // Reduce axis
  std::string fn;   // Math name; Reduce: sum|max|min
  std::vector<NodeP> args;
  std::vector<Slice> slices;  // Load
};

struct Stmt;
struct Stmt {
  enum Kind { Def, Store, For, If } kind;
  Stmt(Kind k, Loc l) : kind(k), loc(l) {}
  Loc loc;
  int reg = -1;  // Def target; For loop variable
  NodeP value;   // Def value, Store value
  int tensor = -1;
  std::vector<Slice> slices;  // Store
  NodeP lo, hi, step, cond;
  int unroll = 1;
  std::vector<Stmt> body, else_body;
};

struct Arg {
  std::string name;
  bool is_tensor = false;
  DType dt = DType::F32;
  std::vector<int> dims;           // tensor: index into Kernel::dims, or -1 for a literal
  std::vector<int64_t> dim_const;  // literal extents where dims[i] == -1
};

struct Reg {
  std::string name;  // unique in the kernel
  VType type;
  bool mut = false;
};

struct Aligned {
  int dim;
  int64_t multiple;
};

struct Kernel {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> params;  // bound autotune parameters
  std::vector<Arg> args;
  std::vector<std::string> dims;  // dimension symbols, in first-use order
  int64_t threads = 128;
  bool threads_explicit = false;
  std::array<NodeP, 3> grid;  // over Dim, Param and Const only
  std::vector<Aligned> aligned;
  bool pipeline = false, tensorcore = false;
  std::vector<Reg> regs;
  std::vector<Stmt> body;
};

std::string print(const Kernel& k);
std::string print_expr(const Kernel& k, const NodeP& n);

// Visits every node of every statement (pre-order).
template <class F>
void walk_node(const NodeP& n, F&& f) {
  if (!n) return;
  f(*n);
  for (auto& a : n->args) walk_node(a, f);
  for (auto& s : n->slices) walk_node(s.start, f);
}

}  // namespace phobos::ir
