// CUDA C++ generation: NVRTC compiles sgemm, hgemm and linear+GELU for sm_90a here (no GPU
// needed); the module cache hits on the second request; the GPU launch checks numerics where a
// device exists and is skipped with the reason otherwise.
#include "phobos/cuda.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "emit/emit.h"
#include "emit/module_cache.h"
#include "phobos/phobos.h"
#include "util.h"

namespace {

struct Inst {
  const char* file;
  const char* kernel;
  std::map<std::string, int64_t> params;
};

// One instance per distinct lowering (SIMT scalar and float4, mma.sync with and without the
// cp.async pipeline, dot and dot_t, ragged edges, elementwise-only, wgmma both B layouts), to
// keep the NVRTC time of this CI test to seconds.
std::vector<Inst> instances() {
  return {
      {"sgemm.ph", "sgemm", {{"TILE_M", 32}, {"TILE_N", 32}, {"TILE_K", 4}, {"T", 256}}},
      {"sgemm.ph", "hgemm", {}},
      {"linear_gelu.ph", "linear_gelu", {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"T", 128}}},
      {"ragged.ph", "sgemm_ragged", {{"TILE_M", 64}, {"TILE_N", 64}, {"TILE_K", 16}, {"T", 128}}},
      {"ragged.ph", "hgemm_ragged", {}},
      {"bench.ph", "sgemm_big", {{"TILE_M", 128}, {"TILE_N", 128}, {"TILE_K", 16}, {"T", 256}}},
      {"bench.ph", "hgemm_big", {{"BM", 256}, {"BN", 128}, {"BK", 64}, {"T", 256}}},
      {"bench.ph", "bias_gelu", {}},
      // sm_90a wgmma forms: B N-major (dot) and B K-major (dot_t)
      {"bench.ph", "hgemm_big", {{"BM", 128}, {"BN", 256}, {"BK", 64}, {"T", 256}}},
      {"bench.ph", "linear_gelu", {{"BM", 128}, {"BN", 128}, {"BK", 64}, {"T", 256}}}};
}

}  // namespace

TEST(PhobosCuda, NvrtcCompilesSeedKernelsForSm90a) {
  if (!phobos::nvrtc_available())
    GTEST_SKIP() << "NVRTC unavailable: phobos was built without the CUDA toolkit";
  for (auto& in : instances()) {
    SCOPED_TRACE(std::string(in.kernel));
    auto k = phobos::compile(phobos_test::example(in.file), in.file).kernel(in.kernel);
    std::string src = k.cuda_source(in.params);
    std::string cubin, log;
    bool ok = phobos::nvrtc_compile(src, in.kernel, "sm_90a", &cubin, &log);
    ASSERT_TRUE(ok) << log << "\n" << src;
    EXPECT_GT(cubin.size(), 1000u);
    EXPECT_EQ(cubin.substr(0, 4), std::string("\x7f"
                                              "ELF"));
  }
}

TEST(PhobosCuda, TensorCoreLoweringUsesMma) {
  auto k = phobos::compile(phobos_test::example("sgemm.ph"), "sgemm.ph").kernel("hgemm");
  std::string src = k.cuda_source();
  // The tile library's mma.sync wrapper, fed by ldmatrix from padded shared tiles.
  EXPECT_NE(src.find("#include \"mma.cuh\""), std::string::npos);
  EXPECT_NE(src.find("tc::tile::mma_16816<tc::tile::f16>"), std::string::npos);
  EXPECT_NE(src.find("tc::tile::ldmatrix_x4(fa[mi].r"), std::string::npos);
  EXPECT_NE(src.find("ph_ldmatrix_x4_trans(t4"), std::string::npos);  // B of dot is [k][n]
  // @aligned drops the edge checks of the loads and the store.
  EXPECT_EQ(src.find("(unsigned)"), std::string::npos);
  auto r = phobos::compile(phobos_test::example("ragged.ph"), "ragged.ph").kernel("hgemm_ragged");
  EXPECT_NE(r.cuda_source().find("(unsigned)"), std::string::npos);
}

TEST(PhobosCuda, HopperTilesLowerToWgmma) {
  auto m = phobos::compile(phobos_test::example("bench.ph"), "bench.ph");
  std::string h =
      m.kernel("hgemm_big").cuda_source({{"BM", 128}, {"BN", 256}, {"BK", 64}, {"T", 256}});
  EXPECT_NE(h.find("tc::tile::Wgmma16<256, tc::tile::f16, 0, 1>::run(r_acc"), std::string::npos);
  // The warp-specialized TMA form: 256 consumers + a producer warpgroup, an mbarrier ring,
  // N-major B in four 64-column boxes, register reallocation, a persistent tile loop.
  EXPECT_NE(h.find("__launch_bounds__(384, 1)"), std::string::npos);
  EXPECT_NE(h.find("const __grid_constant__ tc::tile::TmaMap ph_map_r_b"), std::string::npos);
  EXPECT_NE(h.find("tc::tile::mbar_arrive_expect_tx(&ph_full[ph_ps], 49152u);"), std::string::npos);
  EXPECT_NE(h.find("ph_ps * 16384 + 12288, &ph_map_r_b"), std::string::npos);
  EXPECT_NE(h.find("tc::tile::warpgroup_reg_dealloc<40>();"), std::string::npos);
  EXPECT_NE(h.find("tc::tile::mbar_wait(&ph_full[ph_stage], ph_phase);"), std::string::npos);
  EXPECT_NE(h.find("for (int ph_t = blockIdx.x; ph_t < ph_tiles; ph_t += gridDim.x)"),
            std::string::npos);
  EXPECT_EQ(h.find("reg_fence"), std::string::npos);  // would serialize the wgmmas (C7511)
  EXPECT_NE(h.find("*reinterpret_cast<__half2*>(&C[ph_o])"), std::string::npos);
  // PHOBOS_TMA=0: the cp.async form, all threads loading, a proxy fence before each barrier.
  setenv("PHOBOS_TMA", "0", 1);
  std::string c =
      m.kernel("hgemm_big").cuda_source({{"BM", 128}, {"BN", 256}, {"BK", 64}, {"T", 256}});
  unsetenv("PHOBOS_TMA");
  EXPECT_NE(c.find("ph_fence_proxy_async();"), std::string::npos);
  EXPECT_NE(c.find("ph_cp_async16"), std::string::npos);
  EXPECT_EQ(c.find("tma_load_3d"), std::string::npos);
  std::string l =
      m.kernel("linear_gelu").cuda_source({{"BM", 128}, {"BN", 128}, {"BK", 64}, {"T", 256}});
  EXPECT_NE(l.find("tc::tile::Wgmma16<128, tc::tile::f16, 0, 0>::run(r_acc"), std::string::npos);
  // BK = 32 is not one swizzle atom: mma.sync.
  std::string s =
      m.kernel("hgemm_big").cuda_source({{"BM", 128}, {"BN", 256}, {"BK", 32}, {"T", 256}});
  EXPECT_EQ(s.find("Wgmma16"), std::string::npos);
  EXPECT_NE(s.find("mma_16816"), std::string::npos);
}

TEST(PhobosCuda, ModuleCacheHitsOnSecondRequest) {
  if (!phobos::nvrtc_available())
    GTEST_SKIP() << "NVRTC unavailable: phobos was built without the CUDA toolkit";
  std::string dir = ::testing::TempDir() + "/phobos-modcache-" + std::to_string(::getpid());
  setenv("PHOBOS_MODULE_CACHE", dir.c_str(), 1);
  auto k = phobos::compile(phobos_test::example("sgemm.ph"), "sgemm.ph").kernel("hgemm");
  std::string src = k.cuda_source();
  std::string key = phobos::module_cache_key("hash", src, phobos::nvrtc_version(), "sm_90a");
  EXPECT_NE(key, phobos::module_cache_key("hash2", src, phobos::nvrtc_version(), "sm_90a"));
  EXPECT_NE(key, phobos::module_cache_key("hash", src, phobos::nvrtc_version(), "sm_80"));
  bool hit = true;
  std::string a = phobos::module_cache_get(key, src, "phobos_hgemm_BM64_BN64_BK32", "sm_90a", &hit);
  EXPECT_FALSE(hit);
  std::string b = phobos::module_cache_get(key, src, "phobos_hgemm_BM64_BN64_BK32", "sm_90a", &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(a, b);
  std::filesystem::remove_all(dir);
}

TEST(PhobosCuda, LaunchMatchesFloat64OnTheGpu) {
  std::string why;
  if (!phobos::cuda::device_present(&why)) GTEST_SKIP() << why;
  std::mt19937 g(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{256, 256, 128}, {37, 53, 29}}) {
    auto mod = phobos::compile(phobos_test::example("linear_gelu.ph"), "linear_gelu.ph");
    std::vector<uint16_t> X(M * K), W(N * K), bias(N), Y(M * N, 0x7e00);
    for (auto* v : {&X, &W, &bias})
      for (auto& x : *v) x = phobos::f32_to_f16(static_cast<float>(u(g)));
    void* d[4];
    size_t bytes[4] = {X.size() * 2, W.size() * 2, bias.size() * 2, Y.size() * 2};
    const void* h[4] = {X.data(), W.data(), bias.data(), Y.data()};
    for (int i = 0; i < 4; ++i) {
      d[i] = phobos::cuda::alloc(bytes[i]);
      phobos::cuda::copy_to_device(d[i], h[i], bytes[i]);
    }
    phobos::LaunchOptions opt;
    opt.target = phobos::Target::Cuda;
    opt.autotune = false;
    using phobos::DType;
    std::vector<phobos::Arg> args = {
        phobos::TensorView{d[0], DType::F16, {M, K}}, phobos::TensorView{d[1], DType::F16, {N, K}},
        phobos::TensorView{d[2], DType::F16, {N}}, phobos::TensorView{d[3], DType::F16, {M, N}}};
    mod.kernel("linear_gelu").launch(args, opt);
    phobos::cuda::synchronize();
    phobos::cuda::copy_to_host(Y.data(), d[3], bytes[3]);
    std::vector<double> y, ref;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = phobos::f16_to_f32(bias[j]);
        for (int64_t q = 0; q < K; ++q)
          s += double(phobos::f16_to_f32(X[i * K + q])) * phobos::f16_to_f32(W[j * K + q]);
        ref.push_back(0.5 * s * (1 + std::tanh(0.7978845608028654 * (s + 0.044715 * s * s * s))));
        y.push_back(phobos::f16_to_f32(Y[i * N + j]));
      }
    EXPECT_LE(phobos_test::rms_scaled(y, ref), 5e-3) << M << "x" << N << "x" << K;
    for (auto* p : d) phobos::cuda::free(p);
  }
}

TEST(PhobosCuda, NoDeviceIsAStatusNotACrash) {
  std::string why;
  if (phobos::cuda::device_present(&why)) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_NE(why.find("no CUDA device"), std::string::npos) << why;
  auto k = phobos::compile(phobos_test::example("sgemm.ph"), "sgemm.ph").kernel("hgemm");
  std::vector<uint16_t> a(64 * 64);
  using phobos::DType;
  phobos::LaunchOptions opt;
  opt.target = phobos::Target::Cuda;
  opt.autotune = false;
  try {
    k.launch({phobos::TensorView{a.data(), DType::F16, {64, 64}},
              phobos::TensorView{a.data(), DType::F16, {64, 64}},
              phobos::TensorView{a.data(), DType::F16, {64, 64}}},
             opt);
    FAIL();
  } catch (const phobos::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
}
