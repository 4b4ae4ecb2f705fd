// Scalar semantics of one IR operator, shared by constant folding and the interpreter so the
// two can never disagree.
#pragma once

#include "ir.h"

namespace phobos::ir {

// Applies n.op (or n.fn for Math) to operand values a (and b), rounded to n.type.dt.
// Integer division and remainder truncate toward zero, as in C and CUDA.
double eval_scalar_op(const Node& n, double a, double b);

// While an ExactFloat guard lives on this thread, float results are not rounded to their
// element type: the interpreter then computes the float64 reference of a kernel.
struct ExactFloat {
  ExactFloat();
  ~ExactFloat();
};
bool exact_float();
double round_value(DType dt, double v);  // round_to, unless exact_float() and dt is a float

// Evaluates the Cast of `v` (already rounded to its source type) into `dt`.
inline double eval_cast(DType dt, double v) {
  return round_value(dt, v);
}

}  // namespace phobos::ir
