// Typed constructors for IR nodes: type rules (promotion, NumPy broadcasting) and constant
// folding live here, so every producer of IR (inlined fn or code written in place) builds the
// same tree for the same computation.
#pragma once

#include <optional>

#include "ir.h"

namespace phobos::ir {

NodeP make_const(double v, VType t);
NodeP int_const(int64_t v, bool weak = true);
NodeP float_const(double v, bool weak = true);
NodeP make_leaf(Op op, int idx, VType t);
std::optional<int64_t> const_int(const NodeP& n);

// Result shape of broadcasting a and b (rank <= 2), or nullopt.
std::optional<std::vector<int64_t>> broadcast(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b);
std::string shape_str(const std::vector<int64_t>& s);

// Element-type promotion for arithmetic; throws CompileError at `loc` on a mismatch.
DType promote(const VType& a, const VType& b, Loc loc, const char* what);

NodeP binary(Op op, NodeP a, NodeP b, Loc loc);
NodeP unary(Op op, NodeP a, Loc loc);
NodeP math(const std::string& fn, NodeP a, Loc loc);
NodeP cast(NodeP a, DType dt);
NodeP full(NodeP scalar, VType tile);

bool is_pure(const NodeP& n, const std::vector<Reg>& regs);
bool is_cmp(Op op);
const char* op_name(Op op);

}  // namespace phobos::ir
