// Re-pitching copy of 16-bit operands into TMA-legal rows, both operands in one launch.
//
// Status: opt-in (TC_WGMMA_PACK=vec). It gives the same bytes as gemm_pack.cu's kernel, but on
// the H200 (2026-11-29 22:12 UTC) 4095x4097x4099 ran 508-513 TFLOP/s with it against 548 with
// the old copy, about 20 us more per call. Likely cause (SASS, not measured): ~155
// instructions per 16-byte chunk, most of them the flattened index math below; the old kernel
// takes its row from blockIdx.y (docs/gemm.md, round 7).
//
// Why a second pack kernel (gemm_pack.cu keeps the first, the default): the old one
// gathers each 16-byte destination chunk with eight 2-byte loads and launches once per
// operand. Here each destination chunk comes from the one or two aligned 16-byte source chunks
// that hold it (LDG.128), shifted into place with funnel shifts, so a thread moves 16 bytes
// with two vector loads and one vector store. Each thread handles U chunks at a stride of the
// block, issuing all loads before any store, so U * 32 bytes per thread are in flight. A chunk
// whose aligned source chunks would reach outside its batch's extent (the first chunk of a
// misaligned base, the last one of the last row) gathers its bytes one element at a time, so
// nothing outside the operand is read.
//
// PDL: the kernel waits for the previous kernel before reading (it may have written A or B)
// and lets the GEMM that follows launch at once; the GEMM's own griddepcontrol.wait then holds
// it until this grid has finished and its stores are visible.
#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemm_pack_vec.h"
#include "cuda/tile/grid_dep.cuh"
#include "cuda/tile/types.cuh"

namespace tc::cuda {
namespace {

using namespace tc::tile;

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

struct Job {
  const u8* src;
  u8* dst;
  i64 src_batch, sr, ld, extent;  // bytes
  i32 rows, cols, chunks;         // cols in bytes; chunks = batch * rows * (ld / 16)
  FastDiv cpr, rows_div;          // ld / 16 and rows
};

// The fields of j0 or j1, selected one by one (a reference to either kernel parameter would
// copy both to the stack).
__device__ __forceinline__ Job pick(const Job& j0, const Job& j1, bool second) {
  Job j;
  j.src = second ? j1.src : j0.src;
  j.dst = second ? j1.dst : j0.dst;
  j.src_batch = second ? j1.src_batch : j0.src_batch;
  j.sr = second ? j1.sr : j0.sr;
  j.ld = second ? j1.ld : j0.ld;
  j.extent = second ? j1.extent : j0.extent;
  j.rows = second ? j1.rows : j0.rows;
  j.cols = second ? j1.cols : j0.cols;
  j.chunks = second ? j1.chunks : j0.chunks;
  j.cpr.d = second ? j1.cpr.d : j0.cpr.d;
  j.cpr.mul = second ? j1.cpr.mul : j0.cpr.mul;
  j.cpr.shr = second ? j1.cpr.shr : j0.cpr.shr;
  j.rows_div.d = second ? j1.rows_div.d : j0.rows_div.d;
  j.rows_div.mul = second ? j1.rows_div.mul : j0.rows_div.mul;
  j.rows_div.shr = second ? j1.rows_div.shr : j0.rows_div.shr;
  return j;
}

__device__ __forceinline__ u32 sel4(u32 k, u32 a, u32 b, u32 c, u32 d) {
  return k == 0 ? a : k == 1 ? b : k == 2 ? c : d;
}

// Bytes [sh, sh + 16) of the 32 bytes lo:hi.
__device__ __forceinline__ uint4 shift_bytes(uint4 lo, uint4 hi, u32 sh) {
  const u32 k = sh >> 2, bits = (sh & 3) * 8;
  const u32 x0 = sel4(k, lo.x, lo.y, lo.z, lo.w), x1 = sel4(k, lo.y, lo.z, lo.w, hi.x);
  const u32 x2 = sel4(k, lo.z, lo.w, hi.x, hi.y), x3 = sel4(k, lo.w, hi.x, hi.y, hi.z);
  const u32 x4 = sel4(k, hi.x, hi.y, hi.z, hi.w);
  return make_uint4(__funnelshift_r(x0, x1, bits), __funnelshift_r(x1, x2, bits),
                    __funnelshift_r(x2, x3, bits), __funnelshift_r(x3, x4, bits));
}

// Keeps the first n bytes of v (0 <= n < 16), zeroing the rest: the row's padding columns.
__device__ __forceinline__ uint4 keep_bytes(uint4 v, int n) {
  auto mask = [n](int i, u32 w) {
    const int b = n - 4 * i;
    return b >= 4 ? w : b <= 0 ? 0u : w & ((1u << (8 * b)) - 1);
  };
  return make_uint4(mask(0, v.x), mask(1, v.y), mask(2, v.z), mask(3, v.w));
}

__global__ void __launch_bounds__(kThreads) pack_vec_kernel(const Job j0, const Job j1) {
  grid_dep_wait();
  grid_dep_launch_dependents();
  const i32 total = j0.chunks + j1.chunks;
  const i32 first = blockIdx.x * (kThreads * kUnroll) + threadIdx.x;
  uint4 lo[kUnroll], hi[kUnroll];
  u8* dst[kUnroll];
  u32 sh[kUnroll];
  int n[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const i32 g = first + u * kThreads;
    dst[u] = nullptr;
    if (g >= total) continue;
    const bool second = g >= j0.chunks;
    const Job j = pick(j0, j1, second);
    const u32 l = u32(second ? g - j0.chunks : g);
    const u32 row_lin = j.cpr.div(l);
    const u32 ch = l - row_lin * u32(j.cpr.d);
    const u32 b = j.rows_div.div(row_lin);
    const u32 r = row_lin - b * u32(j.rows);
    const u8* begin = j.src + i64(b) * j.src_batch;
    const u8* s = begin + i64(r) * j.sr + 16 * i64(ch);
    dst[u] = j.dst + i64(row_lin) * j.ld + 16 * i64(ch);
    n[u] = j.cols - 16 * int(ch);  // source bytes this chunk holds (<= 0: padding only)
    lo[u] = hi[u] = make_uint4(0, 0, 0, 0);
    sh[u] = 0;
    if (n[u] <= 0) continue;
    const int want = n[u] < 16 ? n[u] : 16;
    const uintptr_t a = reinterpret_cast<uintptr_t>(s) & ~uintptr_t(15);
    const u32 off = u32(reinterpret_cast<uintptr_t>(s) & 15);
    const bool two = off + want > 16;
    const uintptr_t lim = reinterpret_cast<uintptr_t>(begin + j.extent);
    if (a >= reinterpret_cast<uintptr_t>(begin) && a + (two ? 32 : 16) <= lim) {
      lo[u] = __ldg(reinterpret_cast<const uint4*>(a));
      if (two) hi[u] = __ldg(reinterpret_cast<const uint4*>(a) + 1);
      sh[u] = off;
    } else {  // the chunk's aligned neighbours leave the operand: element loads
      u16 e[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      const u16* p = reinterpret_cast<const u16*>(s);
#pragma unroll
      for (int i = 0; i < 8; ++i)
        if (2 * i < want) e[i] = p[i];
      lo[u] = make_uint4(e[0] | u32(e[1]) << 16, e[2] | u32(e[3]) << 16, e[4] | u32(e[5]) << 16,
                         e[6] | u32(e[7]) << 16);
    }
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    if (dst[u] == nullptr) continue;
    uint4 v = shift_bytes(lo[u], hi[u], sh[u]);
    if (n[u] < 16) v = keep_bytes(v, n[u] < 0 ? 0 : n[u]);
    *reinterpret_cast<uint4*>(dst[u]) = v;
  }
}

bool make_job(const PackCopy& c, Job* j) {
  const i64 cpr = c.ld * 2 / 16;
  const i64 chunks = i64(c.batch) * c.rows * cpr;
  if (c.ld * 2 % 16 != 0 || c.cols > c.ld || chunks >= (i64(1) << 30) || c.rows <= 0) return false;
  j->src = static_cast<const u8*>(c.src);
  j->dst = static_cast<u8*>(c.dst);
  j->src_batch = c.src_batch * 2;
  j->sr = c.sr * 2;
  j->ld = c.ld * 2;
  j->extent = (c.rows - 1) * c.sr * 2 + c.cols * 2;
  j->rows = i32(c.rows);
  j->cols = i32(c.cols * 2);
  j->chunks = i32(chunks);
  j->cpr = FastDiv(u32(cpr));
  j->rows_div = FastDiv(u32(c.rows));
  return true;
}

}  // namespace

cudaError_t launch_pack_vec(const PackCopy* copies, int count, cudaStream_t stream) {
  Job j[2] = {};
  if (count < 1 || count > 2) return cudaErrorInvalidValue;
  for (int i = 0; i < count; ++i)
    if (!make_job(copies[i], &j[i])) return cudaErrorInvalidValue;
  const i64 total = i64(j[0].chunks) + j[1].chunks;
  if (total >= (i64(1) << 31) - kThreads * kUnroll) return cudaErrorInvalidValue;
  const dim3 grid(unsigned((total + kThreads * kUnroll - 1) / (kThreads * kUnroll)));
  return launch_maybe_pdl(pack_vec_kernel, grid, dim3(kThreads), 0, stream, 1, j[0], j[1]);
}

}  // namespace tc::cuda
