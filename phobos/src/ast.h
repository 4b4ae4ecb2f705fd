// Abstract syntax of a .ph file, with a source location on every node.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "phobos/diag.h"

namespace phobos::ast {

struct Expr;
using ExprP = std::shared_ptr<Expr>;

// One item of an index list: `i` (Point), `i :+ n` (Range) or `:` (Full).
struct SliceItem {
  enum Kind { Point, Range, Full } kind = Point;
  ExprP start, len;
  Loc loc;
};

struct Expr {
  enum Kind { Int, Float, Name, Unary, Binary, Call, Ctx, Index } kind;
  Loc loc;
  long long ival = 0;
  double fval = 0;
  std::string name;         // Name, Call (callee), Unary/Binary (operator), Ctx (block|thread|grid)
  int axis = 0;             // Ctx: 0..2 for x, y, z
  std::vector<ExprP> args;  // operands, call arguments; Index: args[0] is the base
  std::vector<SliceItem> items;  // Index
};

// `f32`, `tile<f32>[R, C]`, `tensor<f16>[M, K]`.
struct TypeExpr {
  enum Kind { Scalar, Tile, Tensor } kind = Scalar;
  std::string dtype;
  Loc dtype_loc;
  std::vector<ExprP> dims;  // tile extents; tensor dims are Name or Int expressions
  Loc loc;
};

struct Stmt;
using StmtP = std::shared_ptr<Stmt>;

struct Stmt {
  enum Kind { Let, Var, Assign, ExprStmt, For, If, Return } kind;
  Loc loc;
  std::string name;  // Let/Var name, For variable
  Loc name_loc;
  std::shared_ptr<TypeExpr> type;  // optional annotation on Let/Var
  ExprP target;                    // Assign
  std::string op;                  // Assign: "=", "+=", "-=", "*=", "/="
  ExprP value;                     // Let/Var init, Assign rhs, ExprStmt, Return (may be null)
  ExprP lo, hi, step, unroll;      // For (step, unroll optional)
  ExprP cond;                      // If
  std::vector<StmtP> body, else_body;
};

struct Attr {
  std::string name;
  Loc loc;
  struct Arg {
    std::string key;  // `P in [...]`, `M = e`; empty for a plain expression
    Loc loc;
    ExprP value;              // `M = e` or a plain expression
    std::vector<ExprP> list;  // `P in [v1, v2]`
    bool is_list = false;
  };
  std::vector<Arg> args;
  bool has_parens = false;
};

struct Param {
  std::string name;
  Loc loc;
  std::shared_ptr<TypeExpr> type;  // null for fn parameters (untyped)
};

struct Fn {
  std::string name;
  Loc loc;
  std::vector<Param> params;
  std::vector<StmtP> body;
};

struct Kernel {
  std::string name;
  Loc loc;
  std::vector<Attr> attrs;
  std::vector<Param> params;
  std::vector<StmtP> body;
};

struct Import {
  std::string path;  // "std.linalg" or a file path
  bool is_file = false;
  Loc loc;
};

struct File {
  std::vector<Import> imports;
  std::vector<std::shared_ptr<Fn>> fns;
  std::vector<std::shared_ptr<Kernel>> kernels;
};

}  // namespace phobos::ast
