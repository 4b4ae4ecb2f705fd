// sm_90a wgmma GEMM instances for int8 inputs, int32 accumulation and output. wgmma s8 has no
// transpose bits: both operands are K-major (the planner transposes others into the workspace
// first). Tiles 128 x 256 (also in CTA pairs) and 128 x 128; the 128 x 128 tile runs the
// ping-pong kernel (gemm_wgmma_s8_pingpong.cuh) where s8_pingpong_for says so.
//
// This is the explicit specialization of launch_wgmma_tiles<i8, 0, 0> (declared as a template
// in gemm_wgmma_launch.cuh), in place of the generic definition's instantiation: the routing
// to the ping-pong kernel lives with the int8 kernels, and the planner is unchanged.
#include "cuda/gemm_wgmma_instance.cuh"
#include "cuda/gemm_wgmma_s8_pingpong.cuh"

namespace tc::cuda {
namespace {

// Here rather than in the header: includers that only ask s8_pingpong_wanted (the planner, the
// test) then do not instantiate the kernel.
cudaError_t launch_s8_pingpong(const WgmmaMaps& maps, const WgmmaArgs& args, int grid,
                               cudaStream_t stream) {
  constexpr auto kernel = gemm_s8_pingpong_kernel<kS8PingStages>;
  constexpr int smem = kS8PingSmemBytes;
  if (const cudaError_t e = raise_smem_once<kernel>(smem); e != cudaSuccess) return e;
  s8_pingpong_launches().fetch_add(1, std::memory_order_relaxed);
  return launch_maybe_pdl(kernel, dim3(grid), dim3(384), smem, stream, 1, maps.a, maps.b, maps.c,
                          args);
}

}  // namespace

template <>
cudaError_t launch_wgmma_tiles<i8, 0, 0>(int /*bm: always 128 for s8*/, int bn, int cluster,
                                         const WgmmaMaps& maps, const WgmmaArgs& args, int grid,
                                         cudaStream_t stream) {
  if (cluster == 2) return launch_wgmma_instance<i8, 0, 0, 128, 256, 2>(maps, args, grid, stream);
  if (bn == 256) return launch_wgmma_instance<i8, 0, 0, 128, 256, 1>(maps, args, grid, stream);
  if (s8_pingpong_for(args, grid)) return launch_s8_pingpong(maps, args, grid, stream);
  return launch_wgmma_instance<i8, 0, 0, 128, 128, 1>(maps, args, grid, stream);
}

}  // namespace tc::cuda
