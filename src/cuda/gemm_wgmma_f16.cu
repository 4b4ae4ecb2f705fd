// Instances of the sm_90a TMA + wgmma GEMM for f16 inputs (f32 accumulation; the output type
// is a run-time argument): transposes {n,t} x {n,t}, BN in {128, 256}. 8 kernels.
#include "cuda/gemm_wgmma_launch.cuh"

namespace tc::cuda {

template <int TA, int TB>
static cudaError_t by_bn(int bn, const TmaMap& ma, const TmaMap& mb, const WgmmaArgs& args,
                         int grid, cudaStream_t stream) {
  return bn == 256 ? launch_wgmma_instance<f16, TA, TB, 256>(ma, mb, args, grid, stream)
                   : launch_wgmma_instance<f16, TA, TB, 128>(ma, mb, args, grid, stream);
}

cudaError_t launch_wgmma_f16(int ta, int tb, int bn, const TmaMap& ma, const TmaMap& mb,
                             const WgmmaArgs& args, int grid, cudaStream_t stream) {
  if (ta)
    return tb ? by_bn<1, 1>(bn, ma, mb, args, grid, stream)
              : by_bn<1, 0>(bn, ma, mb, args, grid, stream);
  return tb ? by_bn<0, 1>(bn, ma, mb, args, grid, stream)
            : by_bn<0, 0>(bn, ma, mb, args, grid, stream);
}

}  // namespace tc::cuda
