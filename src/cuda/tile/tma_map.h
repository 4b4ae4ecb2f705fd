// The TMA tensor map as a plain type that host and device code (nvcc, g++, NVRTC) all compile:
// built on the host (tma_host.h), passed to kernels as a `const __grid_constant__ TmaMap`
// parameter and read by the device side (tma.cuh). No includes, so NVRTC needs nothing else.
#pragma once

namespace tc::tile {

// Same size and alignment as CUtensorMap (tma_host.h checks); opaque to the device code.
struct alignas(128) TmaMap {
  unsigned long long opaque[16];
};

}  // namespace tc::tile
