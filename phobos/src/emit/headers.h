// Headers embedded into the library for NVRTC (see headers.cpp).
#pragma once

#include <vector>

namespace phobos {

struct EmbeddedHeader {
  const char* name;  // the #include name: "types.cuh", "mma.cuh", "phobos_mma_map.h"
  const char* text;
};
const std::vector<EmbeddedHeader>& embedded_headers();

}  // namespace phobos
