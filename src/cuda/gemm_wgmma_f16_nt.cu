// sm_90a wgmma GEMM instances: f16 inputs, nt (tc's transpose_a/transpose_b), f32
// accumulation, every tile the planner may choose. The output type is a run-time argument.
#include "cuda/gemm_wgmma_instance.cuh"

namespace tc::cuda {

template cudaError_t launch_wgmma_tiles<f16, 0, 0>(int, int, int, const WgmmaMaps&,
                                                   const WgmmaArgs&, int, cudaStream_t);

}  // namespace tc::cuda
