// Numerics on the CPU target (the interpreter) against independent float64 references:
// sgemm, hgemm and linear+GELU on aligned and ragged shapes, fresh random inputs, poisoned
// write-only outputs. Also the launch errors of spec §2/§4 and CPU autotuning.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "phobos/phobos.h"
#include "tune/cache.h"
#include "util.h"

using phobos::DType;
using phobos::TensorView;

namespace {

struct Mat {
  DType dt;
  int64_t r, c;
  std::vector<uint16_t> h;  // f16 storage
  std::vector<float> f;     // f32 storage
  Mat(DType dt, int64_t r, int64_t c) : dt(dt), r(r), c(c) {
    if (dt == DType::F16)
      h.resize(r * c);
    else
      f.resize(r * c);
  }
  void* data() { return dt == DType::F16 ? static_cast<void*>(h.data()) : f.data(); }
  double at(int64_t i, int64_t j) const {
    return phobos::load_elem(dt, dt == DType::F16 ? static_cast<const void*>(h.data()) : f.data(),
                             i * c + j);
  }
  void set(int64_t i, int64_t j, double v) { phobos::store_elem(dt, data(), i * c + j, v); }
  TensorView view() {
    return TensorView{data(), dt, c == 0 ? std::vector<int64_t>{r} : std::vector<int64_t>{r, c}};
  }
  void randomize(std::mt19937& g) {
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) set(i, j, u(g));
  }
  void poison() {
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) set(i, j, NAN);
  }
  std::vector<double> values() const {
    std::vector<double> v;
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) v.push_back(at(i, j));
    return v;
  }
};

double gelu(double x) {
  return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

class PhobosNumerics : public ::testing::Test {
 protected:
  std::mt19937 rng{12345};
  phobos::LaunchOptions opt;
  void SetUp() override { opt.autotune = false; }
};

double run_sgemm(const std::string& file, const std::string& kernel, int64_t M, int64_t N,
                 int64_t K, std::mt19937& g, const phobos::LaunchOptions& opt) {
  Mat A(DType::F32, M, K), B(DType::F32, K, N), C(DType::F32, M, N);
  A.randomize(g);
  B.randomize(g);
  C.randomize(g);
  double alpha = 0.75, beta = -0.5;
  std::vector<double> ref(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += A.at(i, k) * B.at(k, j);
      ref[i * N + j] = alpha * s + beta * C.at(i, j);
    }
  auto k = phobos::compile(phobos_test::example(file), file).kernel(kernel);
  k.launch({A.view(), B.view(), C.view(), alpha, beta}, opt);
  return phobos_test::rms_scaled(C.values(), ref);
}

double run_hgemm(const std::string& file, const std::string& kernel, int64_t M, int64_t N,
                 int64_t K, std::mt19937& g, const phobos::LaunchOptions& opt) {
  Mat A(DType::F16, M, K), B(DType::F16, K, N), C(DType::F16, M, N);
  A.randomize(g);
  B.randomize(g);
  C.poison();
  std::vector<double> ref(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += A.at(i, k) * B.at(k, j);
      ref[i * N + j] = s;
    }
  auto k = phobos::compile(phobos_test::example(file), file).kernel(kernel);
  k.launch({A.view(), B.view(), C.view()}, opt);
  return phobos_test::rms_scaled(C.values(), ref);
}

double run_linear_gelu(int64_t M, int64_t N, int64_t K, std::mt19937& g,
                       const phobos::LaunchOptions& opt) {
  Mat X(DType::F16, M, K), W(DType::F16, N, K), bias(DType::F16, N, 1), Y(DType::F16, M, N);
  X.randomize(g);
  W.randomize(g);
  bias.randomize(g);
  Y.poison();
  std::vector<double> ref(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += X.at(i, k) * W.at(j, k);
      ref[i * N + j] = gelu(s + bias.at(j, 0));
    }
  auto k = phobos::compile(phobos_test::example("linear_gelu.ph"), "linear_gelu.ph")
               .kernel("linear_gelu");
  TensorView bv{bias.data(), DType::F16, {N}};
  k.launch({X.view(), W.view(), bv, Y.view()}, opt);
  return phobos_test::rms_scaled(Y.values(), ref);
}

}  // namespace

TEST_F(PhobosNumerics, SgemmAligned) {
  EXPECT_LE(run_sgemm("sgemm.ph", "sgemm", 64, 64, 64, rng, opt), 1e-5);
  EXPECT_LE(run_sgemm("sgemm.ph", "sgemm", 64, 96, 32, rng, opt), 1e-5);
}

TEST_F(PhobosNumerics, SgemmRaggedVariant) {
  EXPECT_LE(run_sgemm("ragged.ph", "sgemm_ragged", 37, 53, 29, rng, opt), 1e-5);
  EXPECT_LE(run_sgemm("ragged.ph", "sgemm_ragged", 1, 7, 3, rng, opt), 1e-5);
}

TEST_F(PhobosNumerics, HgemmAlignedAndRagged) {
  EXPECT_LE(run_hgemm("sgemm.ph", "hgemm", 64, 128, 64, rng, opt), 5e-3);
  EXPECT_LE(run_hgemm("ragged.ph", "hgemm_ragged", 37, 53, 29, rng, opt), 5e-3);
}

TEST_F(PhobosNumerics, LinearGeluAlignedAndRagged) {
  EXPECT_LE(run_linear_gelu(64, 64, 64, rng, opt), 5e-3);
  EXPECT_LE(run_linear_gelu(37, 53, 29, rng, opt), 5e-3);
}

TEST_F(PhobosNumerics, AllSgemmCandidatesAgree) {
  // @pipeline and the tile sizes change nothing in the results (spec §4).
  for (int64_t tm : {32, 256})
    for (int64_t tk : {4, 32}) {
      phobos::LaunchOptions o = opt;
      o.params = {{"TILE_M", tm}, {"TILE_N", 32}, {"TILE_K", tk}, {"T", 256}};
      std::mt19937 g(7);
      EXPECT_LE(run_sgemm("sgemm.ph", "sgemm", 256, 32, 32, g, o), 1e-5) << tm << " " << tk;
    }
}

TEST_F(PhobosNumerics, AlignedLaunchFailureNamesTheDimension) {
  try {
    run_sgemm("sgemm.ph", "sgemm", 37, 64, 64, rng, opt);
    FAIL() << "expected an error";
  } catch (const phobos::Error& e) {
    EXPECT_NE(std::string(e.what()).find("M is 37"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("@aligned"), std::string::npos) << e.what();
  }
  try {
    run_hgemm("sgemm.ph", "hgemm", 64, 64, 40, rng, opt);
    FAIL() << "expected an error";
  } catch (const phobos::Error& e) {
    EXPECT_NE(std::string(e.what()).find("K is 40"), std::string::npos) << e.what();
  }
}

TEST_F(PhobosNumerics, DimensionSymbolMismatchNamesSymbolAndBothValues) {
  Mat A(DType::F32, 64, 32), B(DType::F32, 31, 64), C(DType::F32, 64, 64);
  auto k = phobos::compile(phobos_test::example("sgemm.ph"), "sgemm.ph").kernel("sgemm");
  try {
    k.launch({A.view(), B.view(), C.view(), 1.0, 0.0}, opt);
    FAIL();
  } catch (const phobos::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "dimension symbol K is 32 from A (dimension 1) but 31 from B (dimension 0)");
  }
  Mat H(DType::F16, 64, 32);
  try {
    k.launch({H.view(), B.view(), C.view(), 1.0, 0.0}, opt);
    FAIL();
  } catch (const phobos::Error& e) {
    EXPECT_EQ(std::string(e.what()), "argument 'A' of 'sgemm' must be f32, got f16");
  }
}

TEST_F(PhobosNumerics, AutotuneOnCpuSkipsInvalidWithReasonsAndCaches) {
  std::string path = ::testing::TempDir() + "/phobos-tune-" + std::to_string(::getpid()) + ".json";
  std::remove(path.c_str());
  phobos::set_tune_cache(std::make_shared<phobos::FileTuneCache>(path));
  Mat A(DType::F32, 64, 64), B(DType::F32, 64, 64), C(DType::F32, 64, 64);
  A.randomize(rng);
  B.randomize(rng);
  C.randomize(rng);
  std::vector<double> before = C.values();
  auto k = phobos::compile(phobos_test::example("sgemm.ph"), "sgemm.ph").kernel("sgemm");
  std::vector<phobos::Arg> args = {A.view(), B.view(), C.view(), 1.0, 1.0};
  phobos::TuneResult r = k.tune(args);
  EXPECT_EQ(r.rows.size(), 16u);
  int valid = 0, aligned = 0, regs = 0;
  for (auto& row : r.rows) {
    valid += row.valid;
    aligned += row.reason.find("@aligned promises M is a multiple of 256 but M is 64") !=
               std::string::npos;
    regs += row.reason.find("registers per thread") != std::string::npos;
    if (!row.valid) {
      EXPECT_FALSE(row.reason.empty());
    }
  }
  EXPECT_EQ(valid, 4);  // TILE_M = TILE_N = 32, both TILE_K, both T
  EXPECT_GT(aligned, 0);
  EXPECT_FALSE(r.best.empty());
  EXPECT_EQ(C.values(), before);  // tuning restores the outputs it overwrote
  std::string cache = phobos_test::read_file(path);
  EXPECT_NE(cache.find(r.cache_key), std::string::npos);
  // A launch now takes the cached winner and computes C = A B + C.
  phobos::LaunchOptions o;
  k.launch(args, o);
  std::vector<double> ref(64 * 64);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) {
      double s = 0;
      for (int q = 0; q < 64; ++q) s += A.at(i, q) * B.at(q, j);
      ref[i * 64 + j] = s + before[i * 64 + j];
    }
  EXPECT_LE(phobos_test::rms_scaled(C.values(), ref), 1e-5);
  phobos::set_tune_cache(nullptr);
  std::remove(path.c_str());
}
