// Probe of the TMA-store bounds rule behind the wgmma padded-C bug: a tensor-map store of one
// 64-row x 128-byte box over the ragged end of a row whose length is not a multiple of 16 bytes,
// into a matrix with padded rows (ldc > N). It prints how many padding elements per row the
// store wrote, once with the map's extent at N (the old epilogue) and once at N rounded down to
// 16 bytes (the fixed one, which stores the tail columns from registers instead).
//   tma_store_probe        exit 1 when the rounded-down map writes past its extent
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda/gemm_wgmma_args.cuh"
#include "cuda/tile/tma_host.h"

using namespace tc::tile;

__global__ void store_box(const __grid_constant__ TmaMap map, int c0) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ alignas(1024) u8 box[8192];
  for (int i = threadIdx.x; i < 8192 / 4; i += blockDim.x)
    reinterpret_cast<u32*>(box)[i] = 0x3c003c00u;  // f16 1.0 pairs; f32 0.0078; any non-poison
  fence_proxy_async();
  __syncthreads();
  if (threadIdx.x == 0) {
    tma_store_3d(&map, smem_addr(box), c0, 0, 0);
    bulk_commit();
    bulk_wait<0>();
  }
#endif
}

// Returns the number of elements written outside the M x N block (columns N .. ldc - 1).
long probe(int esz, int N, int ldc, int extent) {
  const int M = 64;
  const size_t bytes = size_t(M) * ldc * esz;
  void* c = nullptr;
  if (cudaMalloc(&c, bytes) != cudaSuccess) return -1;
  cudaMemset(c, 0xff, bytes);
  TmaMap map{};
  if (!tma_encode_3d(&map, c, uint32_t(esz), uint64_t(extent), uint64_t(M), 1, uint64_t(ldc) * esz,
                     0, uint32_t(128 / esz), 64)) {
    std::printf("encode failed\n");
    return -1;
  }
  const int box_cols = 128 / esz;
  store_box<<<1, 128>>>(map, (N - 1) / box_cols * box_cols);  // the box holding the row end
  if (cudaDeviceSynchronize() != cudaSuccess) return -1;
  std::vector<unsigned char> h(bytes);
  cudaMemcpy(h.data(), c, bytes, cudaMemcpyDeviceToHost);
  cudaFree(c);
  long outside = 0;
  for (int r = 0; r < M; ++r)
    for (int j = N; j < ldc; ++j)
      for (int b = 0; b < esz; ++b) outside += h[(size_t(r) * ldc + j) * esz + b] != 0xff;
  return outside / esz;
}

int main() {
  int failures = 0;
  struct {
    int esz, N, ldc;
  } cases[] = {{4, 41, 44}, {4, 201, 208}, {2, 201, 208}, {2, 41, 48}};
  for (auto& t : cases) {
    const long old_map = probe(t.esz, t.N, t.ldc, t.N);
    const int fixed_extent = tc::cuda::wgmma_tma_cols(t.N, t.esz);
    const long new_map = probe(t.esz, t.N, t.ldc, fixed_extent);
    std::printf(
        "tma_store_probe esz %d N %d ldc %d: extent N wrote %ld padding elements "
        "(%ld per row); extent %d wrote %ld\n",
        t.esz, t.N, t.ldc, old_map, old_map / 64, fixed_extent, new_map);
    if (new_map != 0) ++failures;
  }
  std::printf("tma_store_probe: %s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
