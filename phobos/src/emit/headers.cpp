// The headers generated CUDA code may include, as text embedded at build time (CMake reads
// src/cuda/tile/*.cuh and mma_map.inc into gen/tile_headers.inc), handed to NVRTC as in-memory
// headers: a compiled program needs neither the source tree nor an include path for them.
#include "headers.h"

namespace phobos {

const std::vector<EmbeddedHeader>& embedded_headers() {
  static const std::vector<EmbeddedHeader> h = {
#include "tile_headers.inc"
  };
  return h;
}

}  // namespace phobos
