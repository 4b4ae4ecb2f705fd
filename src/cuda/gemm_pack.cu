// Helper kernels of the wgmma path: operand packing and the split-K reduction.
//
// Packing: TMA needs 16-byte-aligned bases and row/batch pitches, and wgmma s8 needs K-major
// operands. When an operand breaks either rule it is copied once into the workspace, dense
// with a padded pitch (and transposed for s8). The copy is one pass over the operand at
// memory bandwidth, small beside the O(MNK) product for the shapes that reach this path.
#include "cuda/gemm_wgmma_launch.cuh"

namespace tc::cuda {

// 32 x 32 tiles through shared memory so that both the read (along the source's contiguous
// dimension) and the write (along dst rows) are coalesced, whichever of sr / sc is 1.
template <class E>
__global__ void pack_kernel(const E* __restrict__ src, E* __restrict__ dst, long long src_batch,
                            int rows, int cols, long long sr, long long sc, long long ld) {
  __shared__ E tile[32][33];
  const int b = blockIdx.z;
  const int r0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
  const E* s = src + b * src_batch;
  E* d = dst + b * (long long)rows * ld;
  const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
  if (sc == 1 || sr != 1) {  // source contiguous along c (or neither): read rows of the tile
    for (int j = ty; j < 32; j += 8) {
      const int r = r0 + j, c = c0 + tx;
      if (r < rows && c < cols) tile[j][tx] = s[r * sr + c * sc];
    }
  } else {  // source contiguous along r (a transpose): read columns of the tile
    for (int j = ty; j < 32; j += 8) {
      const int r = r0 + tx, c = c0 + j;
      if (r < rows && c < cols) tile[tx][j] = s[r * sr + c * sc];
    }
  }
  __syncthreads();
  for (int j = ty; j < 32; j += 8) {
    const int r = r0 + j, c = c0 + tx;
    if (r < rows && c < cols) d[r * ld + c] = tile[j][tx];
  }
}

// Re-pitching copy (sc == 1, no transpose): each thread gathers the 16 bytes of one aligned
// destination chunk with element loads (the source rows need not be aligned) and writes them
// as one vector store. Eight or sixteen independent loads per thread keep enough bytes in
// flight; the 32 x 32 tile kernel above issues one 2-byte load per thread per row.
template <class E>
__global__ void pack_rows_kernel(const E* __restrict__ src, E* __restrict__ dst,
                                 long long src_batch, int rows, int cols, long long sr,
                                 long long ld) {
  constexpr int per = 16 / sizeof(E);
  const int b = blockIdx.z;
  const int c = (blockIdx.x * blockDim.x + threadIdx.x) * per;
  if (c >= cols) return;
  const E* s = src + b * src_batch;
  E* d = dst + b * (long long)rows * ld;
  for (int r = blockIdx.y; r < rows; r += gridDim.y) {
    const E* sp = s + r * sr + c;
    union {
      uint4 v;
      E e[per];
    } u;
#pragma unroll
    for (int i = 0; i < per; ++i) u.e[i] = c + i < cols ? sp[i] : E(0);
    // ld is a multiple of 16 bytes, so the chunk is aligned; the padding columns get zeros.
    *reinterpret_cast<uint4*>(d + r * ld + c) = u.v;
  }
}

cudaError_t launch_pack(const void* src, void* dst, int esz, int batch, long long src_batch,
                        int rows, int cols, long long sr, long long sc, long long ld,
                        cudaStream_t stream) {
  if (sc == 1 && esz == 2) {
    const int chunks = (cols + 7) / 8;
    dim3 grid((chunks + 127) / 128, rows < 16384 ? rows : 16384, batch);
    pack_rows_kernel<u16><<<grid, 128, 0, stream>>>(
        static_cast<const u16*>(src), static_cast<u16*>(dst), src_batch, rows, cols, sr, ld);
    return cudaGetLastError();
  }
  dim3 grid((cols + 31) / 32, (rows + 31) / 32, batch), block(32, 8);
  if (esz == 1)
    pack_kernel<i8><<<grid, block, 0, stream>>>(static_cast<const i8*>(src), static_cast<i8*>(dst),
                                                src_batch, rows, cols, sr, sc, ld);
  else
    pack_kernel<u16><<<grid, block, 0, stream>>>(
        static_cast<const u16*>(src), static_cast<u16*>(dst), src_batch, rows, cols, sr, sc, ld);
  return cudaGetLastError();
}

// One thread per output column, rows strided over grid.y: no 64-bit division per element.
template <class OutT, class Acc>
__global__ void splitk_reduce_kernel(const WgmmaArgs a) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= a.N) return;
  const long long mn = (long long)a.M * a.N;
  const int b = blockIdx.z;
  const Acc* part = static_cast<const Acc*>(a.partial) + b * a.splits * mn;
  OutT* out = static_cast<OutT*>(a.c) + b * a.stride_c;
  for (int row = blockIdx.y; row < a.M; row += gridDim.y) {
    const long long e = (long long)row * a.N + col;
    Acc sum = part[e];
    for (int s = 1; s < a.splits; ++s) sum += part[s * mn + e];  // fixed order: deterministic
    OutT* c = out + (long long)row * a.ldc + col;
    if constexpr (is_same<OutT, i32>::value) {
      *c = a.beta != 0.0f ? sum + *c : sum;
    } else {
      float v = a.alpha * sum;
      if (a.beta != 0.0f) v += a.beta * to_f32(*c);
      *c = from_f32<OutT>(v);
    }
  }
}

cudaError_t launch_splitk_reduce(const WgmmaArgs& args, cudaStream_t stream) {
  const int cols = (args.N + 127) / 128;
  const int rows = args.M < 2048 / cols + 1 ? args.M : 2048 / cols + 1;
  dim3 grid(cols, rows, args.batch);
  switch (args.c_type) {
    case CType::f32:
      splitk_reduce_kernel<float, float><<<grid, 128, 0, stream>>>(args);
      break;
    case CType::f16:
      splitk_reduce_kernel<f16, float><<<grid, 128, 0, stream>>>(args);
      break;
    case CType::bf16:
      splitk_reduce_kernel<bf16, float><<<grid, 128, 0, stream>>>(args);
      break;
    case CType::i32:
      splitk_reduce_kernel<i32, i32><<<grid, 128, 0, stream>>>(args);
      break;
  }
  return cudaGetLastError();
}

}  // namespace tc::cuda
