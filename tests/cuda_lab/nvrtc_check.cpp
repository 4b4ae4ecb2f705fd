// Compiles the device-side tile headers with NVRTC for sm_90a (no GPU needed): the contract
// that Phobos-generated code can include them (no standard headers, own int typedefs).
//   nvrtc_check SRC_DIR   (SRC_DIR = the repository's src/)
#include <nvrtc.h>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nvrtc_check SRC_DIR\n");
    return 2;
  }
  const char* src = R"(
#include "cuda/tile/types.cuh"
#include "cuda/tile/mbarrier.cuh"
#include "cuda/tile/tma.cuh"
#include "cuda/tile/wgmma.cuh"
#include "cuda/tile/mma.cuh"
#include "cuda/tile/grid_dep.cuh"
using namespace tc::tile;
extern "C" __global__ void probe(const __grid_constant__ TmaMap map, float* out) {
  __shared__ alignas(1024) u8 smem[16384];
  __shared__ mbarrier bar;
  if (threadIdx.x == 0) { mbar_init(&bar, 1); mbar_fence_init(); }
  __syncthreads();
  grid_dep_wait();
  grid_dep_launch_dependents();
  if (threadIdx.x == 0) {
    mbar_arrive_expect_tx(&bar, 16384);
    tma_load_3d(smem, &map, &bar, 0, 0, 0);
  }
  mbar_wait(&bar, 0);
  float d[64] = {};
  const u64 desc = make_smem_desc_sw128(smem_addr(smem), 16, 1024);
  wgmma_fence();
  Wgmma16<128, bf16, 0, 0>::run(d, desc, desc, 0);
  wgmma_commit();
  wgmma_wait<0>();
  FragC16x8 c{};
  FragA16x16 a{};
  FragB16x8 b{};
  mma_16816<f16>(c, a, b);
  out[threadIdx.x] = d[threadIdx.x % 64] + c.r[0] + to_f32(from_f32<bf16>(1.0f));
}
)";
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, src, "probe.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return 2;
  const std::string inc = std::string("-I") + argv[1];
  std::vector<const char*> opts = {"--gpu-architecture=sm_90a", "-std=c++17", inc.c_str()};
  const nvrtcResult r = nvrtcCompileProgram(prog, int(opts.size()), opts.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  size_t cubin = 0;
  if (r == NVRTC_SUCCESS) nvrtcGetCUBINSize(prog, &cubin);
  nvrtcDestroyProgram(&prog);
  std::printf("nvrtc: %s, cubin %zu bytes\n%s", nvrtcGetErrorString(r), cubin, log.c_str());
  return r == NVRTC_SUCCESS && cubin > 0 ? 0 : 1;
}
