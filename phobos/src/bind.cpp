#include "bind.h"

#include "eval_scalar.h"

namespace phobos {

BoundArgs bind_args(const ir::Kernel& k, std::span<const Arg> args) {
  if (args.size() != k.args.size())
    throw Error("kernel '" + k.name + "' takes " + std::to_string(k.args.size()) +
                " arguments, got " + std::to_string(args.size()));
  BoundArgs b;
  b.tensors.resize(args.size());
  b.scalars.resize(args.size());
  b.dims.assign(k.dims.size(), -1);
  std::vector<std::string> first(k.dims.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Arg& a = k.args[i];
    if (!a.is_tensor) {
      if (!std::holds_alternative<double>(args[i]))
        throw Error("argument '" + a.name + "' of '" + k.name + "' is a scalar " +
                    dtype_name(a.dt) + " but a tensor was given");
      b.scalars[i] = round_to(a.dt, std::get<double>(args[i]));
      continue;
    }
    if (!std::holds_alternative<TensorView>(args[i]))
      throw Error("argument '" + a.name + "' of '" + k.name +
                  "' is a tensor but a scalar was given");
    const TensorView& t = std::get<TensorView>(args[i]);
    if (t.dtype != a.dt)
      throw Error("argument '" + a.name + "' of '" + k.name + "' must be " + dtype_name(a.dt) +
                  ", got " + dtype_name(t.dtype));
    if (t.shape.size() != a.dims.size())
      throw Error("argument '" + a.name + "' of '" + k.name + "' must have " +
                  std::to_string(a.dims.size()) + " dimensions, got " +
                  std::to_string(t.shape.size()));
    if (!t.data)
      throw Error("argument '" + a.name + "' of '" + k.name + "' has a null data pointer");
    for (size_t d = 0; d < a.dims.size(); ++d) {
      int64_t v = t.shape[d];
      if (v <= 0 || v > INT32_MAX)
        throw Error("argument '" + a.name + "' dimension " + std::to_string(d) + " is " +
                    std::to_string(v) + "; dimensions must be in 1..2^31-1");
      if (a.dims[d] < 0) {
        if (v != a.dim_const[d])
          throw Error("argument '" + a.name + "' dimension " + std::to_string(d) + " must be " +
                      std::to_string(a.dim_const[d]) + ", got " + std::to_string(v));
        continue;
      }
      int sym = a.dims[d];
      std::string here = a.name + " (dimension " + std::to_string(d) + ")";
      if (b.dims[sym] < 0) {
        b.dims[sym] = v;
        first[sym] = here;
      } else if (b.dims[sym] != v) {
        throw Error("dimension symbol " + k.dims[sym] + " is " + std::to_string(b.dims[sym]) +
                    " from " + first[sym] + " but " + std::to_string(v) + " from " + here);
      }
    }
    b.tensors[i] = t;
  }
  return b;
}

std::string check_aligned(const ir::Kernel& k, const std::vector<int64_t>& dims) {
  for (auto& al : k.aligned)
    if (dims[al.dim] % al.multiple != 0)
      return "@aligned promises " + k.dims[al.dim] + " is a multiple of " +
             std::to_string(al.multiple) + " but " + k.dims[al.dim] + " is " +
             std::to_string(dims[al.dim]);
  return {};
}

int64_t eval_host(const ir::Kernel& k, const ir::NodeP& n, const BoundArgs& b) {
  using ir::Op;
  switch (n->op) {
    case Op::Const:
      return static_cast<int64_t>(n->cval);
    case Op::Dim:
      return b.dims[n->idx];
    case Op::Param:
      return static_cast<int64_t>(b.scalars[n->idx]);
    case Op::Cast:
      return static_cast<int64_t>(round_to(n->type.dt, double(eval_host(k, n->args[0], b))));
    default:
      break;
  }
  if (n->args.size() == 2)
    return static_cast<int64_t>(ir::eval_scalar_op(*n, double(eval_host(k, n->args[0], b)),
                                                   double(eval_host(k, n->args[1], b))));
  if (n->args.size() == 1)
    return static_cast<int64_t>(ir::eval_scalar_op(*n, double(eval_host(k, n->args[0], b)), 0));
  throw Error("cannot evaluate the grid of '" + k.name + "' on the host");
}

}  // namespace phobos
