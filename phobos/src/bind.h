// Binding launch arguments to a kernel: dtype and rank checks, dimension symbols (spec §2:
// the same symbol must get the same value everywhere) and @aligned promises (spec §4).
#pragma once

#include <span>

#include "ir.h"
#include "phobos/phobos.h"

namespace phobos {

struct BoundArgs {
  std::vector<TensorView> tensors;  // by argument index (empty view for scalars)
  std::vector<double> scalars;      // by argument index (0 for tensors), rounded to the dtype
  std::vector<int64_t> dims;        // values of Kernel::dims
};

// Throws phobos::Error naming the argument, symbol and values on a mismatch.
BoundArgs bind_args(const ir::Kernel& k, std::span<const Arg> args);

// "" when every @aligned promise holds, else the sentence saying which does not.
std::string check_aligned(const ir::Kernel& k, const std::vector<int64_t>& dims);

// Evaluates an expression over dims, params and constants (the grid).
int64_t eval_host(const ir::Kernel& k, const ir::NodeP& n, const BoundArgs& b);

}  // namespace phobos
