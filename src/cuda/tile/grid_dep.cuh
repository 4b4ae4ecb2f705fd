// Programmatic dependent launch (PDL, sm_90+): a kernel launched with
// cudaLaunchAttributeProgrammaticStreamSerialization may start while the previous kernel in
// its stream is still finishing; it must call grid_dep_wait() before touching global memory
// that the previous kernel writes or reads. PTX ISA "griddepcontrol". No-ops before sm_90.
#pragma once

#include "types.cuh"

namespace tc::tile {

// Blocks until every prerequisite grid has completed and its memory is visible.
__device__ __forceinline__ void grid_dep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next PDL kernel in the stream be scheduled (its CTAs then run up to their
// grid_dep_wait() as this grid's CTAs retire).
__device__ __forceinline__ void grid_dep_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace tc::tile
