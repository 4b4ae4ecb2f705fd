// The batched decode kernel's plan for a call (host side), shared by its two host files:
// quant_mma_b32_geometry.cu decides it (consumer warpgroups, X tile, K split, workspace, who
// converts X) and checks the call; quant_mma_b32.cu launches the kernel instance it names. One
// struct and one function, so that the launch file need not see the cost model and the knobs
// that shape the plan, nor the geometry file instantiate the kernel.
#pragma once

#include <cstddef>
#include <string>

#include "cuda/quant_kernels.h"

namespace tc::cuda::quant::b32 {

// Workspace: [X f16][arrival words][partial tiles] (the last two where K is split; X's room is
// kept where the helpers convert it unless forced, so that the split and the size do not
// depend on that choice).
struct Geo {
  int nx = 32, nw = 4, tiles = 0, splits = 1, per = 0;
  bool xin = true;
  bool pair = false;  // W boxes of two stages (Cfg::PAIR; wbox_pair)
  size_t x_bytes = 0, cnt_bytes = 0, work = 0;
};

// mma_b32_supports, which leaves in `g` the geometry it checked (launch_mma_b32 uses it;
// quant_mma_b32_geometry.cu).
bool supports(const Args& a, std::string& why, Geo& g);

}  // namespace tc::cuda::quant::b32
