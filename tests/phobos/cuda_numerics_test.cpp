// GPU numerics of the seed kernels vs float64 (skipped with "no CUDA device" where there is
// none): sgemm and hgemm (aligned, every valid @autotune candidate), their ragged variants on
// odd/prime shapes, linear+GELU on aligned and ragged shapes, and @pipeline on/off giving
// bitwise-identical outputs. Inputs are fresh uniform [-1, 1]; outputs are poisoned with NaN
// first so an element the kernel fails to write fails the check.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "phobos/cuda.h"
#include "phobos/phobos.h"
#include "util.h"

namespace {

using phobos::DType;
using Dims = std::tuple<int64_t, int64_t, int64_t>;  // M, N, K

// A tensor on the host and the device.
struct Tensor {
  DType dt;
  std::vector<int64_t> shape;
  std::vector<float> host;  // the values (f16 ones already rounded)
  void* dev = nullptr;
  Tensor(DType d, std::vector<int64_t> s, std::mt19937& g, bool poison) : dt(d), shape(s) {
    size_t n = 1;
    for (auto x : s) n *= static_cast<size_t>(x);
    std::uniform_real_distribution<float> u(-1, 1);
    host.resize(n);
    for (auto& v : host) v = poison ? NAN : round(u(g));
    dev = phobos::cuda::alloc(bytes());
    upload();
  }
  ~Tensor() { phobos::cuda::free(dev); }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  float round(float v) const {
    return dt == DType::F16 ? phobos::f16_to_f32(phobos::f32_to_f16(v)) : v;
  }
  size_t bytes() const { return host.size() * (dt == DType::F16 ? 2 : 4); }
  void upload() {
    if (dt == DType::F32) return phobos::cuda::copy_to_device(dev, host.data(), bytes());
    std::vector<uint16_t> h(host.size());
    for (size_t i = 0; i < h.size(); ++i) h[i] = phobos::f32_to_f16(host[i]);
    phobos::cuda::copy_to_device(dev, h.data(), bytes());
  }
  std::vector<double> download() const {
    std::vector<double> out(host.size());
    if (dt == DType::F32) {
      std::vector<float> h(host.size());
      phobos::cuda::copy_to_host(h.data(), dev, bytes());
      for (size_t i = 0; i < h.size(); ++i) out[i] = h[i];
    } else {
      std::vector<uint16_t> h(host.size());
      phobos::cuda::copy_to_host(h.data(), dev, bytes());
      for (size_t i = 0; i < h.size(); ++i) out[i] = phobos::f16_to_f32(h[i]);
    }
    return out;
  }
  phobos::TensorView view() const { return {dev, dt, shape}; }
};

// C[M, N] (+)= A[M, K] @ B (B [K, N], or [N, K] when trans), in float64.
std::vector<double> gemm64(const Tensor& A, const Tensor& B, int64_t M, int64_t N, int64_t K,
                           bool trans) {
  std::vector<double> c(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t q = 0; q < K; ++q)
        s += double(A.host[i * K + q]) * B.host[trans ? j * K + q : q * N + j];
      c[i * N + j] = s;
    }
  return c;
}

// Every @autotune candidate of `kernel` that can serve these dims, launched with fixed params.
std::vector<std::map<std::string, int64_t>> candidates(const phobos::Kernel& k,
                                                       std::span<const phobos::Arg> args) {
  phobos::LaunchOptions o;
  o.target = phobos::Target::Cuda;
  std::vector<std::map<std::string, int64_t>> out;
  // tune() lists every candidate with its validity; it also proves the autotuner runs.
  for (auto& row : k.tune(args, o).rows)
    if (row.valid) out.push_back(row.params);
  return out;
}

class PhobosCudaNumerics : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!phobos::cuda::device_present(&why)) GTEST_SKIP() << why;
  }
  std::mt19937 g{20261129};
};

void run_sgemm(const std::string& file, const std::string& name, Dims d, std::mt19937& g,
               int* ran) {
  auto [M, N, K] = d;
  auto k = phobos::compile(phobos_test::example(file), file).kernel(name);
  Tensor A(DType::F32, {M, K}, g, false), B(DType::F32, {K, N}, g, false),
      C(DType::F32, {M, N}, g, false);
  std::vector<double> ref = gemm64(A, B, M, N, K, false);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = 1.5 * ref[i] - 0.75 * C.host[i];
  std::vector<phobos::Arg> args = {A.view(), B.view(), C.view(), 1.5, -0.75};
  for (auto& p : candidates(k, args)) {
    C.upload();  // C is read (beta) and written
    phobos::LaunchOptions o;
    o.target = phobos::Target::Cuda;
    o.params = p;
    k.launch(args, o);
    phobos::cuda::synchronize();
    std::string tag = name + " " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                      std::to_string(K) + " TILE_M=" + std::to_string(p["TILE_M"]) +
                      " TILE_N=" + std::to_string(p["TILE_N"]) +
                      " TILE_K=" + std::to_string(p["TILE_K"]) + " T=" + std::to_string(p["T"]);
    EXPECT_LE(phobos_test::rms_scaled(C.download(), ref), 1e-5) << tag;
    ++*ran;
  }
}

TEST_F(PhobosCudaNumerics, SgemmAlignedEveryCandidate) {
  int ran = 0;
  run_sgemm("sgemm.ph", "sgemm", {512, 256, 128}, g, &ran);
  EXPECT_GE(ran, 4);  // 32x32, 256x32, 32x256 tiles at least
}

TEST_F(PhobosCudaNumerics, SgemmRaggedEveryCandidate) {
  int ran = 0;
  run_sgemm("ragged.ph", "sgemm_ragged", {131, 77, 61}, g, &ran);
  run_sgemm("ragged.ph", "sgemm_ragged", {1, 300, 17}, g, &ran);
  EXPECT_GE(ran, 16);
}

// hgemm-shaped kernels (A [M, K], B [K, N], C [M, N], f16): the first valid candidate, or
// every valid candidate when `all`.
void run_hgemm(const std::string& file, const std::string& name, Dims d, std::mt19937& g,
               bool all = false) {
  auto [M, N, K] = d;
  auto k = phobos::compile(phobos_test::example(file), file).kernel(name);
  Tensor A(DType::F16, {M, K}, g, false), B(DType::F16, {K, N}, g, false),
      C(DType::F16, {M, N}, g, true);
  std::vector<double> ref = gemm64(A, B, M, N, K, false);
  std::vector<phobos::Arg> args = {A.view(), B.view(), C.view()};
  std::vector<std::map<std::string, int64_t>> ps = {{}};
  if (all) ps = candidates(k, args);
  EXPECT_FALSE(ps.empty());
  for (auto& p : ps) {
    std::fill(C.host.begin(), C.host.end(), NAN);
    C.upload();
    phobos::LaunchOptions o;
    o.target = phobos::Target::Cuda;
    o.autotune = false;
    o.params = p;
    k.launch(args, o);
    phobos::cuda::synchronize();
    std::string tag;
    for (auto& [n, v] : p) tag += " " + n + "=" + std::to_string(v);
    EXPECT_LE(phobos_test::rms_scaled(C.download(), ref), 5e-3)
        << name << " " << M << "x" << N << "x" << K << tag;
  }
}

TEST_F(PhobosCudaNumerics, HgemmAlignedAndRagged) {
  run_hgemm("sgemm.ph", "hgemm", {128, 192, 96}, g);
  run_hgemm("sgemm.ph", "hgemm", {512, 512, 512}, g);
  run_hgemm("ragged.ph", "hgemm_ragged", {97, 45, 53}, g);
  run_hgemm("ragged.ph", "hgemm_ragged", {64, 64, 32}, g);
  run_hgemm("ragged.ph", "hgemm_ragged", {3, 131, 257}, g);
}

// The kernels phobos_bench times (phobos/examples/bench.ph), every candidate.
TEST_F(PhobosCudaNumerics, BenchKernelsEveryCandidate) {
  int ran = 0;
  run_sgemm("bench.ph", "sgemm_big", {256, 256, 64}, g, &ran);
  EXPECT_GE(ran, 8);
  run_hgemm("bench.ph", "hgemm_big", {512, 512, 256}, g, true);
  run_hgemm("bench.ph", "hgemm_any", {250, 330, 170}, g, true);
  run_hgemm("bench.ph", "hgemm_any", {64, 128, 32}, g, true);
}

// Y = gelu(X W^T + bias) in float64, and the GPU output of every candidate of `src`.
void run_linear_gelu(const std::string& src, Dims d, std::mt19937& g,
                     std::vector<std::vector<double>>* outs) {
  auto [M, N, K] = d;
  auto k = phobos::compile(src, "linear_gelu.ph").kernel("linear_gelu");
  Tensor X(DType::F16, {M, K}, g, false), W(DType::F16, {N, K}, g, false),
      bias(DType::F16, {N}, g, false), Y(DType::F16, {M, N}, g, true);
  std::vector<double> ref = gemm64(X, W, M, N, K, true);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = ref[i * N + j] + bias.host[j];
      ref[i * N + j] = 0.5 * s * (1 + std::tanh(0.7978845608028654 * (s + 0.044715 * s * s * s)));
    }
  std::vector<phobos::Arg> args = {X.view(), W.view(), bias.view(), Y.view()};
  for (auto& p : candidates(k, args)) {
    std::fill(Y.host.begin(), Y.host.end(), NAN);
    Y.upload();
    phobos::LaunchOptions o;
    o.target = phobos::Target::Cuda;
    o.params = p;
    k.launch(args, o);
    phobos::cuda::synchronize();
    outs->push_back(Y.download());
    EXPECT_LE(phobos_test::rms_scaled(outs->back(), ref), 5e-3)
        << M << "x" << N << "x" << K << " BM=" << p["BM"] << " BN=" << p["BN"] << " T=" << p["T"];
  }
}

std::string without_pipeline(std::string s) {
  size_t at = s.find("@pipeline\n");
  EXPECT_NE(at, std::string::npos);
  return s.erase(at, 10);
}

TEST_F(PhobosCudaNumerics, LinearGeluAlignedRaggedAndPipelineOff) {
  std::string src = phobos_test::example("linear_gelu.ph");
  for (Dims d : {Dims{256, 384, 256}, Dims{37, 53, 29}, Dims{130, 200, 72}}) {
    std::vector<std::vector<double>> on, off;
    std::mt19937 g1 = g, g2 = g;  // the same inputs for both programs
    run_linear_gelu(src, d, g1, &on);
    run_linear_gelu(without_pipeline(src), d, g2, &off);
    g = g1;
    ASSERT_EQ(on.size(), off.size());
    EXPECT_GE(on.size(), 4u);
    for (size_t i = 0; i < on.size(); ++i) EXPECT_EQ(on[i], off[i]) << "candidate " << i;
  }
}

// The bench's linear+GELU (BK 64 with 256 threads: wgmma with B K-major on sm_90a), every
// candidate, aligned and ragged.
TEST_F(PhobosCudaNumerics, BenchLinearGeluEveryCandidate) {
  std::string src = phobos_test::example("bench.ph");
  // 130x300x104: ragged M and N with TMA-legal rows (K % 8 == 0) and a K tail TMA zero-fills;
  // 130x300x100: rows of 200 bytes, which TMA cannot address (the cp.async form runs).
  for (Dims d : {Dims{256, 512, 192}, Dims{130, 300, 104}, Dims{130, 300, 100}}) {
    std::vector<std::vector<double>> outs;
    run_linear_gelu(src, d, g, &outs);
    EXPECT_GE(outs.size(), 6u);
  }
}

// The warp-specialized TMA form with 2 and 3 persistent CTAs: each walks several tiles, so the
// mbarrier ring's stage and phase carry over between tiles and the producer runs ahead into
// the next tile during the epilogue. Also the same shapes with the form off (PHOBOS_TMA=0).
TEST_F(PhobosCudaNumerics, WarpSpecializedSeveralTilesPerCta) {
  for (const char* cap : {"2", "3"}) {
    setenv("PHOBOS_MAX_CTAS", cap, 1);
    run_hgemm("bench.ph", "hgemm_big", {512, 768, 320}, g, true);
    std::vector<std::vector<double>> outs;
    run_linear_gelu(phobos_test::example("bench.ph"), Dims{390, 700, 136}, g, &outs);
    unsetenv("PHOBOS_MAX_CTAS");
  }
  setenv("PHOBOS_TMA", "0", 1);
  run_hgemm("bench.ph", "hgemm_big", {512, 512, 256}, g, true);
  unsetenv("PHOBOS_TMA");
}

TEST_F(PhobosCudaNumerics, SgemmPipelineOnOffIdentical) {
  std::string src = phobos_test::example("ragged.ph");
  auto on = phobos::compile(src, "ragged.ph").kernel("sgemm_ragged");
  auto off = phobos::compile(without_pipeline(src), "ragged.ph").kernel("sgemm_ragged");
  const int64_t M = 99, N = 70, K = 45;
  Tensor A(DType::F32, {M, K}, g, false), B(DType::F32, {K, N}, g, false),
      C(DType::F32, {M, N}, g, false);
  std::vector<phobos::Arg> args = {A.view(), B.view(), C.view(), 1.0, 0.5};
  int compared = 0;
  for (auto& p : candidates(on, args)) {
    std::vector<double> out[2];
    for (int i = 0; i < 2; ++i) {
      C.upload();
      phobos::LaunchOptions o;
      o.target = phobos::Target::Cuda;
      o.params = p;
      (i ? off : on).launch(args, o);
      phobos::cuda::synchronize();
      out[i] = C.download();
    }
    EXPECT_EQ(out[0], out[1]);
    ++compared;
  }
  EXPECT_GE(compared, 8);
}

}  // namespace
