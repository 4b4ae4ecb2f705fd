// The IR interpreter: the reference semantics of Phobos on the CPU (spec §1).
//
// A kernel body runs once per block (tile statements are block-wide); when the body reads
// ctx.thread.x it runs once per thread of the block instead. Every operation rounds its result
// to its element type; dot products accumulate in double and round once per dot into the
// accumulator type; out-of-range elements of a slice read as 0 and are not stored.
#pragma once

#include "bind.h"

namespace phobos {

void interpret(const ir::Kernel& k, const BoundArgs& args);

// The float64 reference: the same kernel with no float rounding, on float64 copies of the
// tensors (inputs unchanged). Returns every tensor argument's final contents.
std::vector<std::vector<double>> interpret_f64(const ir::Kernel& k, const BoundArgs& args);

}  // namespace phobos
