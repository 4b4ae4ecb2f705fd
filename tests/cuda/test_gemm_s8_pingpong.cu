// The int8 ping-pong GEMM kernel (src/cuda/gemm_wgmma_s8_pingpong.cuh) against an exact integer
// reference, launched directly (gemm_wgmma_s8.cu and gemm_pack.cu are compiled into this test,
// so the launch counter and the knob are this binary's own): odd shapes, ragged row ends with
// padded ldc, beta = 1 (register epilogue), the register epilogue at beta = 0, split-K through
// the reduce kernel, batches with a broadcast B, small grids (many tiles per CTA, odd counts,
// so the two consumers' ring bookkeeping is exercised). C starts poisoned, its padding must stay
// so, repeats are bitwise identical and equal to the cooperative kernel's output.
// The public API's four transposes: test_gemm_s8_pingpong_api.cpp. This file needs only the
// CUDA runtime (no libtc), so it also builds as a standalone binary for a short device run.
// TC_S8_BENCH=1 adds a timing case (4096^3 and 8192^3 NT against cuBLASLt, see Bench below).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/gemm_wgmma_launch.cuh"
#include "cuda/gemm_wgmma_s8_pingpong.cuh"
#include "cuda/tile/tma_host.h"
#ifdef TC_TEST_HAVE_PEER
#include <algorithm>
#include <ctime>
#include <span>

#include "cublaslt_peer.h"
#include "gpu_timer.h"
#endif

namespace tc::test {
namespace {

using cuda::WgmmaArgs;
using cuda::WgmmaMaps;

constexpr int32_t kPoison = 0x7f7f7f7f;
// Poisoned C rows after the last batch's block: a store past row M (or past the last batch)
// lands there and is caught by check().
constexpr int64_t kGuardRows = 128;

// TC_S8_PINGPONG for one scope (the knob is read at every launch); unset afterwards.
struct Knob {
  explicit Knob(const char* v) { v ? setenv("TC_S8_PINGPONG", v, 1) : unsetenv("TC_S8_PINGPONG"); }
  ~Knob() { unsetenv("TC_S8_PINGPONG"); }
};

bool sm90a() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return major == 9 && minor == 0;
}

struct Case {
  int M, N, K, batch;
  int ldc_pad;  // extra s32 elements per C row (4 keeps the pitch TMA-legal)
  int beta;     // 0 or 1 (C += A B reads C: register epilogue)
  int splits;   // split-K partials, summed by the reduce kernel
  bool tma_store, b_bcast;
  int grid;  // persistent CTAs (small grids put many tiles on each)
};

// Device operands of one case: A (M x K) and B (N x K) K-major with pitch K rounded up to 16
// bytes, C with pitch N + ldc_pad, the split-K partials.
struct Problem {
  Case c;
  int64_t lda, ldc;
  std::vector<int8_t> a, b;
  std::vector<int32_t> c0;  // C before the call (poison, random inside the blocks for beta = 1)
  int8_t *da = nullptr, *db = nullptr;
  int32_t *dc = nullptr, *dpart = nullptr;
  WgmmaMaps maps{};
  WgmmaArgs args{};
  ~Problem() {
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dpart);
  }
};

void make_problem(Problem& p, const Case& c, std::mt19937_64& rng, int bn) {
  p.c = c;
  p.lda = (c.K + 15) / 16 * 16;
  p.ldc = c.N + c.ldc_pad;
  const int bb = c.b_bcast ? 1 : c.batch;
  p.a.assign(size_t(c.batch) * c.M * p.lda, 0);
  p.b.assign(size_t(bb) * c.N * p.lda, 0);
  for (auto* v : {&p.a, &p.b})
    for (auto& x : *v) x = int8_t(int(rng() % 256) - 128);
  p.c0.assign(size_t(c.batch * c.M + kGuardRows) * p.ldc, kPoison);
  if (c.beta)
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = 0; j < c.N; ++j)
          p.c0[(b * c.M + i) * p.ldc + j] = int32_t(rng() % 2001) - 1000;
  ASSERT_EQ(cudaMalloc(&p.da, p.a.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&p.db, p.b.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&p.dc, p.c0.size() * 4), cudaSuccess);
  cudaMemcpy(p.da, p.a.data(), p.a.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(p.db, p.b.data(), p.b.size(), cudaMemcpyHostToDevice);
  const int kb_total = (c.K + 127) / 128;
  if (c.splits > 1)
    ASSERT_EQ(cudaMalloc(&p.dpart, size_t(c.batch) * c.splits * c.M * c.N * 4), cudaSuccess);
  // The planner's maps and arguments (gemm_wgmma.cu) for BM = 128 and this BN.
  ASSERT_TRUE(
      tile::tma_encode_3d(&p.maps.a, p.da, 1, c.K, c.M, c.batch, p.lda, c.M * p.lda, 128, 128));
  ASSERT_TRUE(tile::tma_encode_3d(&p.maps.b, p.db, 1, c.K, c.N, bb, p.lda, c.N * p.lda, 128, bn));
  WgmmaArgs& a = p.args;
  a.M = c.M, a.N = c.N, a.K = c.K, a.batch = c.batch;
  a.tiles_m = (c.M + 127) / 128, a.tiles_n = (c.N + bn - 1) / bn;
  a.kb_total = kb_total, a.splits = c.splits, a.kb_per_split = (kb_total + c.splits - 1) / c.splits;
  a.a_bcast = 0, a.b_bcast = c.b_bcast && c.batch > 1;
  a.alpha = 1.0f, a.beta = float(c.beta);
  a.c = p.dc, a.ldc = p.ldc, a.stride_c = int64_t(c.M) * p.ldc;
  a.c_type = cuda::CType::i32;
  a.c_vec2 = p.ldc % 2 == 0;
  a.c_trans = 0;
  a.n_tma = cuda::wgmma_tma_cols(c.N, 4);
  a.partial = p.dpart;
  a.tma_store = c.tma_store && c.beta == 0 && c.splits == 1 && a.n_tma > 0 &&
                tile::tma_encode_3d(&p.maps.c, p.dc, 4, a.n_tma, c.M, c.batch, p.ldc * 4,
                                    a.stride_c * 4, 32, 64);
}

// One launch with TC_S8_PINGPONG = knob; the output bytes.
std::vector<int32_t> run(Problem& p, const char* knob, int bn) {
  Knob env(knob);
  cudaMemcpy(p.dc, p.c0.data(), p.c0.size() * 4, cudaMemcpyHostToDevice);
  cudaError_t e =
      cuda::launch_wgmma_tiles<tile::i8, 0, 0>(128, bn, 1, p.maps, p.args, p.c.grid, nullptr);
  if (e == cudaSuccess && p.c.splits > 1) e = cuda::launch_splitk_reduce(p.args, nullptr);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  EXPECT_EQ(e, cudaSuccess) << cudaGetErrorString(e);
  std::vector<int32_t> out(p.c0.size());
  cudaMemcpy(out.data(), p.dc, out.size() * 4, cudaMemcpyDeviceToHost);
  return out;
}

// Exact check: inside the M x N blocks C0 * beta + A B^T, outside untouched.
void check(const Problem& p, const std::vector<int32_t>& out, const std::string& what) {
  const Case& c = p.c;
  int64_t bad = 0;
  for (int64_t b = 0; b < c.batch; ++b) {
    const int8_t* B = p.b.data() + (c.b_bcast ? 0 : b * c.N * p.lda);
    for (int64_t i = 0; i < c.M; ++i) {
      const int8_t* A = p.a.data() + (b * c.M + i) * p.lda;
      for (int64_t j = 0; j < p.ldc; ++j) {
        const size_t e = size_t((b * c.M + i) * p.ldc + j);
        int32_t want = p.c0[e];
        if (j < c.N) {
          int32_t s = 0;
          for (int64_t k = 0; k < c.K; ++k) s += int32_t(A[k]) * B[j * p.lda + k];
          want = c.beta ? want + s : s;
        }
        if (out[e] != want && bad++ < 3)
          ADD_FAILURE() << what << ": batch " << b << " (" << i << ", " << j << ") = " << out[e]
                        << ", want " << want;
      }
    }
  }
  for (size_t e = size_t(c.batch * c.M * p.ldc); e < out.size(); ++e)
    if (out[e] != kPoison && bad++ < 3)
      ADD_FAILURE() << what << ": guard element " << e - size_t(c.batch * c.M * p.ldc)
                    << " after C was written (" << out[e] << ")";
  EXPECT_EQ(bad, 0) << what;
}

class S8PingPong : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA device";
    if (!sm90a()) GTEST_SKIP() << "needs sm_90a";
  }
};

TEST_F(S8PingPong, ExactOnOddShapesBitwiseAsCooperative) {
  const Case cases[] = {
      {77, 91, 103, 1, 4, 0, 1, true, false, 1},      // one tile, rows 77..127 masked
      {60, 70, 50, 1, 4, 0, 1, true, false, 1},       // second half entirely below M
      {300, 517, 1000, 1, 4, 0, 1, true, false, 5},   // 15 tiles on 5 CTAs: 3 each, odd
      {257, 1001, 200, 1, 4, 0, 1, true, false, 6},   // ragged row end: tail from registers
      {129, 129, 129, 1, 3, 0, 1, false, false, 2},   // register epilogue at beta 0
      {130, 260, 300, 3, 4, 1, 1, true, true, 3},     // beta 1, batched, B broadcast
      {200, 300, 4099, 1, 4, 0, 2, true, false, 4},   // split-K partials + reduce
      {256, 384, 512, 2, 0, 0, 1, true, false, 132},  // more CTAs than tiles
  };
  std::mt19937_64 rng(20261129);
  for (const Case& c : cases) {
    Problem p;
    make_problem(p, c, rng, 128);
    if (HasFatalFailure()) return;
    const std::string what = std::to_string(c.M) + "x" + std::to_string(c.N) + "x" +
                             std::to_string(c.K) + " batch " + std::to_string(c.batch) + " beta " +
                             std::to_string(c.beta) + " splits " + std::to_string(c.splits) +
                             " grid " + std::to_string(c.grid) +
                             (p.args.tma_store ? " tma-store" : " registers");
    const long long before = cuda::s8_pingpong_launches().load();
    const std::vector<int32_t> ping = run(p, "1", 128);
    EXPECT_EQ(cuda::s8_pingpong_launches().load(), before + 1) << what << ": not ping-pong";
    check(p, ping, what + " ping-pong");
    EXPECT_TRUE(run(p, "1", 128) == ping) << what << ": repeat differs";
    EXPECT_TRUE(run(p, "0", 128) == ping) << what << ": cooperative 128x128 differs";
    EXPECT_EQ(cuda::s8_pingpong_launches().load(), before + 2) << what << ": knob 0 ran it";
  }
}

// Unset knob: ping-pong only where the CTAs get two tiles or more on average (no GPU needed).
TEST(S8PingPongKnob, Default) {
  WgmmaArgs a{};
  a.batch = 1, a.splits = 1, a.tiles_m = 32, a.tiles_n = 32;
  Knob unset(nullptr);
  EXPECT_TRUE(cuda::s8_pingpong_for(a, 132));
  a.tiles_n = 4;  // 128 tiles on 128 CTAs
  EXPECT_FALSE(cuda::s8_pingpong_for(a, 128));
  Knob on("1");
  EXPECT_TRUE(cuda::s8_pingpong_for(a, 128));
  // Arguments of an in-cluster split-K launch (WgmmaArgs::ksplit) never go to the ping-pong.
  struct WithKsplit {
    int batch = 1, splits = 1, tiles_m = 32, tiles_n = 32, ksplit = 2;
  };
  EXPECT_FALSE(cuda::s8_pingpong_for(WithKsplit{}, 132));
}

#ifdef TC_TEST_HAVE_PEER
// TC_S8_BENCH=1: 4096^3 and 8192^3 NT, the operands rotated over copies larger than twice the
// L2, timed in alternating batches (gpu_timer.h) in one process: the cooperative 128 x 256
// kernel (the static ladder's choice), the cooperative 128 x 128, the ping-pong 128 x 128 and
// cuBLASLt called directly (the bench's peer). The outputs must agree bitwise.
TEST_F(S8PingPong, Bench) {
  if (!std::getenv("TC_S8_BENCH")) GTEST_SKIP() << "TC_S8_BENCH=1 times the kernels";
  int dev = 0, sms = 0, l2 = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  for (const int n : {4096, 8192}) {
    const size_t ab = size_t(n) * n;  // bytes of A, and of B
    const int sets = int(std::clamp<size_t>((2 * size_t(l2) + 2 * ab - 1) / (2 * ab), 1, 8));
    int8_t *A = nullptr, *B = nullptr;
    int32_t* C[5] = {};
    ASSERT_EQ(cudaMalloc(&A, sets * ab), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&B, sets * ab), cudaSuccess);
    for (auto*& c : C) ASSERT_EQ(cudaMalloc(&c, ab * 4), cudaSuccess);
    ASSERT_EQ(bench::fill_random(A, TC_DTYPE_I8, sets * ab, 1, s), cudaSuccess);
    ASSERT_EQ(bench::fill_random(B, TC_DTYPE_I8, sets * ab, 2, s), cudaSuccess);
    // Maps per copy for BN 256 and 128, C map per output.
    std::vector<WgmmaMaps> m256(sets), m128(sets);
    WgmmaArgs a256{}, a128{};
    for (int i = 0; i < sets; ++i)
      for (const int bn : {256, 128}) {
        WgmmaMaps& m = bn == 256 ? m256[i] : m128[i];
        ASSERT_TRUE(tile::tma_encode_3d(&m.a, A + i * ab, 1, n, n, 1, n, 0, 128, 128));
        ASSERT_TRUE(tile::tma_encode_3d(&m.b, B + i * ab, 1, n, n, 1, n, 0, 128, bn));
      }
    for (const int bn : {256, 128}) {
      WgmmaArgs& a = bn == 256 ? a256 : a128;
      a.M = a.N = a.K = n, a.batch = 1;
      a.tiles_m = n / 128, a.tiles_n = n / bn, a.splits = 1, a.kb_total = a.kb_per_split = n / 128;
      a.alpha = 1.0f, a.beta = 0.0f, a.ldc = n, a.c_type = cuda::CType::i32, a.c_vec2 = 1;
      a.n_tma = n, a.tma_store = 1;
    }
    bench::CublasLtPeer peer;
    std::string why;
    ASSERT_TRUE(
        peer.prepare({n, n, n, 1, TC_DTYPE_I8, TC_DTYPE_I32, TC_DTYPE_I32, false, true}, &why))
        << why;
    // One launch of kernel j on copy i % sets into C[j].
    // Kernel j: 0 cooperative 128 x 256, 1 cooperative 128 x 128, 2 ping-pong 128 x 128,
    // 3 cooperative 128 x 256 in CTA pairs multicasting B (its B box is 128 rows: m128's map).
    // Pairs halve B's L2 -> SM traffic: a ping-pong that loses to it is bound by that traffic.
    auto own = [&](int j, int i) {
      WgmmaMaps m = j == 0 ? m256[i % sets] : m128[i % sets];
      WgmmaArgs a = j == 0 || j == 3 ? a256 : a128;
      a.c = C[j];
      if (!tile::tma_encode_3d(&m.c, C[j], 4, n, n, 1, size_t(n) * 4, 0, 32, 64)) return false;
      setenv("TC_S8_PINGPONG", j == 2 ? "1" : "0", 1);
      const int units = a.tiles_m * a.tiles_n;
      const cudaError_t e = cuda::launch_wgmma_tiles<tile::i8, 0, 0>(
          128, j == 0 || j == 3 ? 256 : 128, j == 3 ? 2 : 1, m, a, std::min(units, sms), s);
      if (e != cudaSuccess) std::printf("kernel %d: %s\n", j, cudaGetErrorString(e));
      return e == cudaSuccess;
    };
    constexpr int kRuns = 5;  // four own, then the peer
    bench::Launch l[kRuns];
    for (int j = 0; j < 4; ++j) l[j] = [&own, j](int i) { return own(j, i); };
    l[4] = [&](int i) { return peer.run(A + (i % sets) * ab, B + (i % sets) * ab, C[4], s); };
    const bench::Launch* ls[kRuns] = {&l[0], &l[1], &l[2], &l[3], &l[4]};
    double ms[kRuns];
    const std::time_t t0 = std::time(nullptr);
    bench::alternating_median_ms(s, std::span<const bench::Launch* const>(ls), 0.5, ms);
    unsetenv("TC_S8_PINGPONG");
    char when[32];
    std::strftime(when, sizeof when, "%H:%M:%S UTC", std::gmtime(&t0));
    const char* names[kRuns] = {"coop 128x256", "coop 128x128", "ping-pong 128x128",
                                "coop 128x256 mcast2", "cuBLASLt"};
    for (int j = 0; j < kRuns; ++j) {
      ASSERT_GT(ms[j], 0) << names[j] << ": " << cudaGetErrorString(cudaGetLastError());
      std::printf("%s s8 NT %d^3 %-20s %8.1f TOP/s  %.4f ms  x cuBLASLt %.3f\n", when, n, names[j],
                  2.0 * n * double(n) * n / (ms[j] * 1e-3) / 1e12, ms[j], ms[kRuns - 1] / ms[j]);
    }
    // One more call of each on copy 0; the outputs must agree bitwise.
    for (int j = 0; j < kRuns; ++j) ASSERT_TRUE(l[j](0)) << names[j];
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    std::vector<int32_t> h0(ab), h(ab);
    cudaMemcpy(h0.data(), C[0], ab * 4, cudaMemcpyDeviceToHost);
    for (int j = 1; j < kRuns; ++j) {
      cudaMemcpy(h.data(), C[j], ab * 4, cudaMemcpyDeviceToHost);
      EXPECT_TRUE(h == h0) << names[j] << " differs from " << names[0];
    }
    unsetenv("TC_S8_PINGPONG");
    cudaFree(A);
    cudaFree(B);
    for (auto* c : C) cudaFree(c);
  }
  cudaStreamDestroy(s);
}
#endif

}  // namespace
}  // namespace tc::test
