// Copies for the cuBLASLt int8 rows (contract in i8_pack.h). One thread per destination element,
// consecutive threads along the destination row, so writes are coalesced; a transposed source
// is read with a stride, which is acceptable on this fallback path (the copy is O(MK + NK)
// beside the O(MNK) product).
#include "cuda/i8_pack.h"

namespace tc::cuda {
namespace {

__global__ void i8_pack_kernel(const int8_t* __restrict__ src, long long src_batch, int rows,
                               int cols, long long sr, long long sk, int8_t* __restrict__ dst,
                               int rows_pad, int ld, long long total) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const long long per = (long long)rows_pad * ld;
    const long long b = i / per, e = i % per;
    const int r = int(e / ld), k = int(e % ld);
    dst[i] = (r < rows && k < cols) ? src[b * src_batch + r * sr + k * sk] : int8_t(0);
  }
}

__global__ void i32_add_back_kernel(const int32_t* __restrict__ s, int ld_s, int M, int N,
                                    int32_t* __restrict__ c, long long ldc, long long stride_c,
                                    bool accumulate, long long total) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const long long per = (long long)M * N;
    const long long b = i / per, e = i % per;
    const int m = int(e / N), n = int(e % N);
    const int32_t v = s[b * (long long)M * ld_s + (long long)m * ld_s + n];
    int32_t* out = c + b * stride_c + m * ldc + n;
    *out = accumulate ? *out + v : v;
  }
}

int blocks_for(long long total) {
  const long long b = (total + 255) / 256;
  return int(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

}  // namespace

cudaError_t launch_i8_pack(const int8_t* src, long long src_batch, int rows, int cols, long long sr,
                           long long sk, int8_t* dst, int rows_pad, int ld, int batch,
                           cudaStream_t stream) {
  const long long total = (long long)batch * rows_pad * ld;
  i8_pack_kernel<<<blocks_for(total), 256, 0, stream>>>(src, src_batch, rows, cols, sr, sk, dst,
                                                        rows_pad, ld, total);
  return cudaGetLastError();
}

cudaError_t launch_i32_add_back(const int32_t* s, int ld_s, int M, int N, int batch, int32_t* c,
                                long long ldc, long long stride_c, bool accumulate,
                                cudaStream_t stream) {
  const long long total = (long long)batch * M * N;
  i32_add_back_kernel<<<blocks_for(total), 256, 0, stream>>>(s, ld_s, M, N, c, ldc, stride_c,
                                                             accumulate, total);
  return cudaGetLastError();
}

}  // namespace tc::cuda
