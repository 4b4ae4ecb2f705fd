// sm_90a wgmma GEMM instances for int8 inputs, int32 accumulation and output. wgmma s8 has no
// transpose bits: both operands are K-major (the planner transposes others into the workspace
// first). Tiles 128 x 256 and 128 x 128.
#include "cuda/gemm_wgmma_instance.cuh"

namespace tc::cuda {

template cudaError_t launch_wgmma_tiles<i8, 0, 0>(int, int, int, const WgmmaMaps&, const WgmmaArgs&,
                                                  int, cudaStream_t);

}  // namespace tc::cuda
