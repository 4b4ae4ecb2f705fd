// Host side of the warp-specialized TMA form (Plan::ws): which launches TMA can address, and
// the tensor maps handed to the kernel as `const __grid_constant__ tc::tile::TmaMap` parameters,
// encoded by the tile library's host side (src/cuda/tile/tma_host.h: 3-D map, 128-byte swizzle,
// zero fill out of range). Only built with the CUDA runtime (PHOBOS_HAVE_CUDART).
#pragma once

#include <vector>

#include "../bind.h"
#include "../passes/plan.h"
#include "tma_map.h"

namespace phobos {

using TmaMapHost = tc::tile::TmaMap;

// Every operand's base is 16-byte aligned, its rows (the inner dimension) are whole 16-byte
// chunks and no extent is 0.
bool tma_legal(const std::vector<passes::Plan::TmaOperand>& ops, const BoundArgs& b);

// Encodes operand `op`'s map over its tensor (boxes as Plan::TmaOperand::kind says).
bool tma_encode(const passes::Plan::TmaOperand& op, const BoundArgs& b, TmaMapHost* map);

}  // namespace phobos
