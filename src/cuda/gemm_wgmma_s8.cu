// Instances of the sm_90a TMA + wgmma GEMM for int8 inputs, int32 accumulation and output.
// wgmma s8 has no transpose bits: both operands are K-major (the planner transposes others
// into the workspace first). BN in {128, 256}. 2 kernels.
#include "cuda/gemm_wgmma_launch.cuh"

namespace tc::cuda {

cudaError_t launch_wgmma_s8(int bn, const TmaMap& ma, const TmaMap& mb, const WgmmaArgs& args,
                            int grid, cudaStream_t stream) {
  return bn == 256 ? launch_wgmma_instance<i8, 0, 0, 256>(ma, mb, args, grid, stream)
                   : launch_wgmma_instance<i8, 0, 0, 128>(ma, mb, args, grid, stream);
}

}  // namespace tc::cuda
