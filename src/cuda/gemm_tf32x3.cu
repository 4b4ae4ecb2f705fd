// f32 GEMM at f32 accuracy on the tensor cores (sm_90a): 3xTF32. Every input x is split into
// hi = tf32(x) and lo = tf32(x - hi), so x = hi + lo to about 2^-22 relative, and
// A B ~ Ahi Bhi + Ahi Blo + Alo Bhi (the dropped Alo Blo is ~2^-22 of each product).
//
// Contract:
//  - A pre-pass (split_tf32_kernel) writes both operands K-major into the workspace, one row per
//    M (or N) index holding hi[0..kp) then lo[0..kp), kp = K rounded up to 32 (zeros past K).
//    wgmma tf32 reads only K-major operands, so this pass also serves every transpose, ld and
//    alignment. Workspace: (M + N) x 2 kp x 4 bytes.
//  - The kernel is gemm_wgmma_kernel's structure (hopper.md section 5): 384 threads, a TMA
//    producer warpgroup and two consumers of 64 rows each, 128 x 128 tiles, BK = 32 (one
//    128-byte swizzle atom), 3 stages of 64 KB (A hi, A lo, B hi, B lo), persistent tiles.
//  - Accuracy: the tensor cores' f32 accumulation is not a round-to-nearest running sum. With
//    chunks of 4 k-blocks (48 wgmma accumulations) the H200 lab measured 8.5-9.3e-7 rms for
//    every K from 301 to 8192, i.e. the error is set by the chunk length, not by K. So the
//    tensor cores sum chunks of CHUNK k-blocks (default 1: 12 accumulations) and each chunk is
//    added to an f32 total in registers with FADD (round to nearest).
//  - Epilogue: gemm_wgmma's (TMA stores when beta == 0 and C is TMA-legal; else direct).
#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cuda/gemm_kernels.h"
#include "cuda/gemm_launch_pdl.h"
#include "cuda/gemm_wgmma_epilogue.cuh"
#include "cuda/tile/tma_host.h"

namespace tc::cuda {
namespace {

constexpr int kStages = 3;

struct Tf32Smem {
  static constexpr int box = 128 * 128;        // one 128-row x 128-byte operand box
  static constexpr int stage_bytes = 4 * box;  // A hi, A lo, B hi, B lo
  static constexpr int epi_offset = kStages * stage_bytes;
  static constexpr int bar_offset = epi_offset + 2 * kWgmmaEpiBytes;
  static constexpr int total = 1024 + bar_offset + 2 * kStages * 8;
  static_assert(total <= 232448, "over the 227 KB opt-in limit");
};

__device__ __forceinline__ float tf32_round(float x) {
  u32 r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

// Element (r, k) of the source is src[r * sr + k * sk]; one of sr, sk is 1. 32 x 32 tiles
// through shared memory keep both the read and the (K-major) write coalesced.
__global__ void split_tf32_kernel(const float* __restrict__ src, float* __restrict__ dst, int rows,
                                  int K, long long sr, long long sk, int kp) {
  __shared__ float tile[32][33];
  const int r0 = blockIdx.y * 32, k0 = blockIdx.x * 32;
  const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
  if (sk == 1) {
    for (int j = ty; j < 32; j += 8) {
      const int r = r0 + j, k = k0 + tx;
      tile[j][tx] = r < rows && k < K ? src[r * sr + k] : 0.0f;
    }
  } else {
    for (int j = ty; j < 32; j += 8) {
      const int r = r0 + tx, k = k0 + j;
      tile[tx][j] = r < rows && k < K ? src[k * sk + r] : 0.0f;
    }
  }
  __syncthreads();
  for (int j = ty; j < 32; j += 8) {
    const int r = r0 + j, k = k0 + tx;
    if (r >= rows) continue;
    const float x = tile[j][tx], hi = tf32_round(x);
    float* d = dst + (long long)r * 2 * kp;
    d[k] = hi;
    d[kp + k] = tf32_round(x - hi);
  }
}

// CHUNK: k-blocks of 32 summed by the tensor cores before the f32 total (see the contract).
template <int CHUNK>
__global__ void __launch_bounds__(384, 1)
    gemm_tf32x3_kernel(const __grid_constant__ TmaMap map_a, const __grid_constant__ TmaMap map_b,
                       const __grid_constant__ TmaMap map_c, const WgmmaArgs args, const i32 kp) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Tf32Smem;
  extern __shared__ u8 smem_raw[];
  u8* smem = reinterpret_cast<u8*>((reinterpret_cast<u64>(smem_raw) + 1023) & ~u64(1023));
  mbarrier* full = reinterpret_cast<mbarrier*>(smem + S::bar_offset);
  mbarrier* empty = full + kStages;
  const int wg = threadIdx.x / 128;
  const i32 units = args.tiles_m * args.tiles_n;
  if (threadIdx.x == 0) {
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 8);  // lane 0 of each consumer warp
    }
    mbar_fence_init();
  }
  __syncthreads();
  grid_dep_wait();
  grid_dep_launch_dependents();

  if (wg == 0) {
    warpgroup_reg_dealloc<40>();
    if (threadIdx.x == 0) {
      int stage = 0;
      u32 phase = 0;
      for (i32 t = blockIdx.x; t < units; t += gridDim.x) {
        const WorkUnit u = decode_unit<128>(args, t);
        const i32 n0 = u.n0 * 128;
        for (i32 kb = u.kb0; kb < u.kb1; ++kb) {
          mbar_wait(&empty[stage], phase ^ 1);
          u8* s = smem + stage * S::stage_bytes;
          mbar_arrive_expect_tx(&full[stage], S::stage_bytes);
          const i32 k0 = kb * 32;
          tma_load_3d(s, &map_a, &full[stage], k0, u.m0, 0);
          tma_load_3d(s + S::box, &map_a, &full[stage], kp + k0, u.m0, 0);
          tma_load_3d(s + 2 * S::box, &map_b, &full[stage], k0, n0, 0);
          tma_load_3d(s + 3 * S::box, &map_b, &full[stage], kp + k0, n0, 0);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    warpgroup_reg_alloc<232>();
    const int cw = wg - 1;
    u8* epi = smem + S::epi_offset + cw * kWgmmaEpiBytes;
    int stage = 0;
    u32 phase = 0;
    float d[64], tot[64];
    for (i32 t = blockIdx.x; t < units; t += gridDim.x) {
      WorkUnit u = decode_unit<128>(args, t);
      u.n0 *= 128;
#pragma unroll
      for (int i = 0; i < 64; ++i) tot[i] = 0.0f;
      for (i32 c0 = u.kb0; c0 < u.kb1; c0 += CHUNK) {
        const i32 c1 = min(u.kb1, c0 + CHUNK);
        int prev = -1;
        for (i32 kb = c0; kb < c1; ++kb) {
          mbar_wait(&full[stage], phase);
          const u32 s = smem_addr(smem + stage * S::stage_bytes) + cw * 8192;
          const u32 sb = smem_addr(smem + stage * S::stage_bytes) + 2 * S::box;
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < 4; ++kk) {  // k8 steps: +32 bytes in the swizzled row
            const u64 ahi = make_smem_desc_sw128(s + kk * 32, 16, 1024);
            const u64 alo = make_smem_desc_sw128(s + S::box + kk * 32, 16, 1024);
            const u64 bhi = make_smem_desc_sw128(sb + kk * 32, 16, 1024);
            const u64 blo = make_smem_desc_sw128(sb + S::box + kk * 32, 16, 1024);
            // Small terms first, while the chunk sum is small.
            WgmmaTf32x128::run(d, ahi, blo, (kb > c0 || kk > 0) ? 1u : 0u);
            WgmmaTf32x128::run(d, alo, bhi, 1u);
            WgmmaTf32x128::run(d, ahi, bhi, 1u);
          }
          wgmma_commit();
          wgmma_wait<1>();
          if (prev >= 0 && threadIdx.x % 32 == 0) mbar_arrive(&empty[prev]);
          prev = stage;
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
        wgmma_wait<0>();
        if (prev >= 0 && threadIdx.x % 32 == 0) mbar_arrive(&empty[prev]);
#pragma unroll
        for (int i = 0; i < 64; ++i) tot[i] += d[i];
      }
      const i32 row_base = u.m0 + 64 * cw;
      if (args.tma_store)
        store_tile_tma<float, 128>(args, &map_c, tot, u, row_base, epi, cw);
      else
        store_tile<float, 128>(args, tot, u, row_base);
    }
    if (args.tma_store && threadIdx.x % 128 == 0) bulk_wait<0>();
  }
#endif
}

template <int CHUNK>
cudaError_t launch_chunked(const GemmPlan& plan, cudaStream_t stream, const TmaMap& ma,
                           const TmaMap& mb, const TmaMap& mc, const WgmmaArgs& args, int64_t kp) {
  static std::atomic<unsigned long long> raised{0};  // smem opt-in, once per device
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = 1ull << (dev & 63);
  if (!(raised.load(std::memory_order_acquire) & bit)) {
    e = cudaFuncSetAttribute(gemm_tf32x3_kernel<CHUNK>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             Tf32Smem::total);
    if (e != cudaSuccess) return e;
    raised.fetch_or(bit, std::memory_order_acq_rel);
  }
  return launch_maybe_pdl(gemm_tf32x3_kernel<CHUNK>, dim3(plan.grid), dim3(384), Tf32Smem::total,
                          stream, 1, ma, mb, mc, args, i32(kp));
}

int64_t kpad(int64_t K) {
  return (K + 31) / 32 * 32;
}
size_t align256(size_t x) {
  return (x + 255) / 256 * 256;
}

}  // namespace

bool plan_gemm_tf32x3(const GemmProblem& p, const GemmDevice& dev, GemmPlan* plan,
                      std::string& why) {
  const tc_gemm_desc& d = p.d;
  if (d.a_dtype != TC_DTYPE_F32 || d.b_dtype != TC_DTYPE_F32 || d.c_dtype != TC_DTYPE_F32 ||
      d.accum_dtype != TC_DTYPE_F32) {
    why = "3xTF32 kernel: f32 inputs, output and accumulation only";
    return false;
  }
  if (dev.cc_major != 9 || dev.cc_minor != 0 || !tile::tma_encoder()) {
    why = "3xTF32 kernel: built for sm_90a (wgmma, TMA) only";
    return false;
  }
  if (p.batch != 1 || (d.M + 31) / 32 > 65535 || (d.N + 31) / 32 > 65535) {
    why = "3xTF32 kernel: batch 1 and M, N below 2^21 only (the SIMT kernel serves the rest)";
    return false;
  }
  const int64_t kp = kpad(d.K);
  const int64_t units = ((d.M + 127) / 128) * ((d.N + 127) / 128);
  plan->bm = plan->bn = 128;
  plan->stages = kStages;
  plan->splits = 1;
  plan->grid = int(std::min<int64_t>(units, dev.sm_count));
  plan->pack_a = plan->pack_b = true;
  plan->workspace_bytes = align256(size_t(d.M) * 2 * kp * 4) + align256(size_t(d.N) * 2 * kp * 4);
  // p.variant 1..3 = tensor-core chunks of 1, 2, 4 k-blocks (the autotuner's choices; more
  // is faster and less accurate); 0 = 1.
  const int chunk = p.variant >= 1 && p.variant <= 3 ? 1 << (p.variant - 1) : 1;
  plan->name = std::string("gemm_wgmma_tf32x3_f32_") + (d.transpose_a ? "t" : "n") +
               (d.transpose_b ? "t" : "n") + "_bm128_bn128_bk32_s3_chunk" +
               std::to_string(32 * chunk) + "_split";
  return true;
}

tc_status_t launch_gemm_tf32x3(const GemmProblem& p, const GemmPlan& plan, void* workspace) {
  const tc_gemm_desc& d = p.d;
  const int64_t kp = kpad(d.K);
  const size_t a_bytes = align256(size_t(d.M) * 2 * kp * 4);
  if (!workspace || plan.workspace_bytes < a_bytes + align256(size_t(d.N) * 2 * kp * 4))
    return TC_ERROR_INTERNAL;
  auto stream = static_cast<cudaStream_t>(p.stream);
  float* a2 = static_cast<float*>(workspace);
  float* b2 = reinterpret_cast<float*>(static_cast<char*>(workspace) + a_bytes);
  const dim3 blk(32, 8);
  // A(m, k) = transpose_a ? A[k lda + m] : A[m lda + k]; B(n, k) likewise with transpose_b.
  split_tf32_kernel<<<dim3(unsigned(kp / 32), unsigned((d.M + 31) / 32)), blk, 0, stream>>>(
      static_cast<const float*>(p.a), a2, int(d.M), int(d.K), d.transpose_a ? 1 : d.lda,
      d.transpose_a ? d.lda : 1, int(kp));
  split_tf32_kernel<<<dim3(unsigned(kp / 32), unsigned((d.N + 31) / 32)), blk, 0, stream>>>(
      static_cast<const float*>(p.b), b2, int(d.N), int(d.K), d.transpose_b ? d.ldb : 1,
      d.transpose_b ? 1 : d.ldb, int(kp));
  if (cudaGetLastError() != cudaSuccess) return TC_ERROR_BACKEND_FAILURE;

  TmaMap ma, mb, mc{};
  if (!tile::tma_encode_3d(&ma, a2, 4, uint64_t(2 * kp), uint64_t(d.M), 1, uint64_t(2 * kp * 4), 0,
                           32, 128) ||
      !tile::tma_encode_3d(&mb, b2, 4, uint64_t(2 * kp), uint64_t(d.N), 1, uint64_t(2 * kp * 4), 0,
                           32, 128))
    return TC_ERROR_BACKEND_FAILURE;
  WgmmaArgs args{};
  args.M = d.M;
  args.N = d.N;
  args.K = d.K;
  args.batch = 1;
  args.tiles_m = int((d.M + 127) / 128);
  args.tiles_n = int((d.N + 127) / 128);
  args.splits = 1;
  args.kb_total = args.kb_per_split = int(kp / 32);
  args.alpha = d.alpha;
  args.beta = d.beta;
  args.c = p.c;
  args.ldc = d.ldc;
  args.c_type = CType::f32;
  args.c_vec2 = d.ldc % 2 == 0 && reinterpret_cast<uintptr_t>(p.c) % 8 == 0;
  const char* ev = std::getenv("TC_WGMMA_EPILOGUE");
  args.tma_store = !(ev && std::strcmp(ev, "direct") == 0) && d.beta == 0.0f &&
                   tile::tma_base_ok(p.c) && tile::tma_pitch_ok(uint64_t(d.ldc) * 4) &&
                   tile::tma_encode_3d(&mc, p.c, 4, uint64_t(d.N), uint64_t(d.M), 1,
                                       uint64_t(d.ldc) * 4, 0, 32, 64);

  const int chunk = p.variant >= 1 && p.variant <= 3 ? 1 << (p.variant - 1) : 1;
  const cudaError_t e = chunk == 4   ? launch_chunked<4>(plan, stream, ma, mb, mc, args, kp)
                        : chunk == 2 ? launch_chunked<2>(plan, stream, ma, mb, mc, args, kp)
                                     : launch_chunked<1>(plan, stream, ma, mb, mc, args, kp);
  return e == cudaSuccess ? TC_SUCCESS : TC_ERROR_BACKEND_FAILURE;
}

}  // namespace tc::cuda
