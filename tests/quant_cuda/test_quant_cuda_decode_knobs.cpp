// The fifth session's decode-kernel knobs on their own, against float64 of the dequantized
// weights, with Y poisoned (NaN) before every launch, each configuration launched twice back to
// back (the second under PDL):
// - bulk GEMV (M <= 4): X quantized with two items per thread where X has more items than
//   threads (M = 1 at K = 11008, M = 2 and 4 at K >= 2048) against the earlier rounds of one
//   item (TC_QUANT_BULK_XPAIRS=0): the same codes, so the same bits; the producer keeping at
//   most 1-3 stages in flight (TC_QUANT_BULK_PACE; 2 by default at M = 1, Q4_0 / Q4_K), with
//   and without its wait for X, and the earlier default (FIRST=4, no pacing): the same bits; X
//   quantized by halves over 2-CTA clusters (TC_QUANT_BULK_XCL, by default Q8_0 above K =
//   4096): the same codes, so the same bits (which launches the host sends to the cluster path
//   is checked on its own, BulkGemvClusterChoice); stages capped at 32 or 64 KB
//   (TC_QUANT_BULK_STAGE_KB; by default 64 for Q4_0's long shapes): other rows a
//   stage, the same bits;
// - X-in-registers MMA (M <= 8, quant_mma_xreg.cu): the hoisted unit offsets against the earlier
//   addressing (TC_QUANT_F16_HOIST=0), the producer waiting for X after 1 or 2 stages
//   (TC_QUANT_F16_XFIRST; 2 by default, 0 the earlier form) or keeping 1-2 stages in flight
//   (TC_QUANT_F16_XPACE), X prefetched into L2 before the grid wait (TC_QUANT_F16_XPREF,
//   fourteenth session), X's rows by bulk copies into the ring's last slots and its items read
//   from there (by default since the fifteenth session, where X fits beside the gate) against
//   X's loads (TC_QUANT_F16_XTMA=0): the same values and arithmetic, the same bits; 2-CTA
//   clusters where one CTA would do (TC_QUANT_F16_XCL=2: K split, so other sums): bound 1e-3 and
//   the same bits over repeats.
// Odd N, K from 1024 to 14336 (ring slots reused, partial last tiles and passes), every format.
// Skips without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cuda/quant_kernels.h"
#include "device_inputs.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

using Knobs = std::vector<std::pair<const char*, const char*>>;

struct Config {
  const char* label;
  Knobs knobs;
  bool same_bits;  // as the first configuration's
};

// A launcher of src/cuda/quant_kernels.h and what it accepts.
struct Launcher {
  bool (*supports)(const kq::Args&, std::string&);
  tc_status_t (*launch)(const kq::Args&, void*);
};

// Runs `l` (8-bit activations, workspace `work` where given) under each configuration, twice
// (the second under PDL), Y poisoned before each; checks the bound, the bits over the two
// launches, and the bits against the first configuration where the knob changes no arithmetic.
void run_configs(const LaunchCase& c, const std::vector<Config>& configs, double bound,
                 uint32_t seed, Launcher l, void* work = nullptr, size_t work_bytes = 0) {
  const Weights wt = make_weights(c.w, c.N, c.K, seed);
  const Activations a = make_activations(TC_DTYPE_F32, c.M, c.K, seed + 1);
  const std::vector<double> ref = reference(wt, a, c.M, c.N, c.K);
  DevMem w(wt.bytes.size()), x(a.bytes()), y(ref.size() * 4);
  ASSERT_NO_FATAL_FAILURE(upload(wt, a, w, x));
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  std::vector<float> base;
  for (const Config& cfg : configs) {
    KnobScope scope;  // unset again however the configuration ends
    for (const auto& [k, v] : cfg.knobs) scope.set(k, v);
    std::vector<float> first;
    for (int rep = 0; rep < 2; ++rep) {
      ASSERT_EQ(cudaMemsetAsync(y.p, 0xff, ref.size() * 4, st), cudaSuccess);
      kq::Args args = launch_args(c, w, x, y, work, work_bytes);
      args.act8 = true;
      args.pdl = rep == 1;
      std::string why;
      ASSERT_TRUE(l.supports(args, why)) << why;
      ASSERT_EQ(l.launch(args, st), TC_SUCCESS) << tc_last_error_message();
      std::vector<float> got(ref.size());
      ASSERT_EQ(cudaMemcpyAsync(got.data(), y.p, got.size() * 4, cudaMemcpyDeviceToHost, st),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
      const std::string what = std::string(cfg.label) + " w=" + std::to_string(c.w) +
                               " M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) +
                               " K=" + std::to_string(c.K) + " rep=" + std::to_string(rep);
      EXPECT_LE(rms_scaled(got, ref), bound) << what;
      if (rep == 0) first = got;
      EXPECT_EQ(std::memcmp(got.data(), first.data(), got.size() * 4), 0)
          << "repeat differs: " << what;
      if (base.empty()) base = got;
      if (cfg.same_bits) {
        EXPECT_EQ(std::memcmp(got.data(), base.data(), got.size() * 4), 0)
            << "differs from " << configs[0].label << ": " << what;
      }
    }
  }
  cudaStreamDestroy(st);
}

TEST(QuantCudaDecodeKnobs, BulkGemvXPairsGiveTheSameBits) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  const std::vector<Config> configs = {
      {"default", {}, true},
      {"xpairs=0", {{"TC_QUANT_BULK_XPAIRS", "0"}}, true},
      {"pace=1", {{"TC_QUANT_BULK_PACE", "1"}}, true},
      {"pace=0 first=4 (before 22:10)",
       {{"TC_QUANT_BULK_PACE", "0"}, {"TC_QUANT_BULK_FIRST", "4"}},
       true},
      {"pace=12 (>= stages: no pacing)", {{"TC_QUANT_BULK_PACE", "12"}}, true},
      {"pace=2 first=0", {{"TC_QUANT_BULK_PACE", "2"}, {"TC_QUANT_BULK_FIRST", "0"}}, true},
      {"pace=3 first=2", {{"TC_QUANT_BULK_PACE", "3"}, {"TC_QUANT_BULK_FIRST", "2"}}, true},
      {"pace_kb=0 (Q4_K: PACE=2)", {{"TC_QUANT_BULK_PACE_KB", "0"}}, true},
      {"pace=1 pace_kb=0 (Q4_K: PACE=1)",
       {{"TC_QUANT_BULK_PACE", "1"}, {"TC_QUANT_BULK_PACE_KB", "0"}},
       true},
      {"pace_kb=64 (4 stages of 18 KB)", {{"TC_QUANT_BULK_PACE_KB", "64"}}, true},
      {"ctas=2 pace=2", {{"TC_QUANT_BULK_CTAS", "2"}, {"TC_QUANT_BULK_PACE", "2"}}, false},
      {"stage_kb=32 (the earlier default)", {{"TC_QUANT_BULK_STAGE_KB", "32"}}, true},
      {"stage_kb=64", {{"TC_QUANT_BULK_STAGE_KB", "64"}}, true},
      {"xcl=1", {{"TC_QUANT_BULK_XCL", "1"}}, true},
      {"xcl=2 xcl_k=0", {{"TC_QUANT_BULK_XCL", "2"}, {"TC_QUANT_BULK_XCL_K", "0"}}, true},
      {"xcl=2 xcl_k=0 pace=0 first=4",
       {{"TC_QUANT_BULK_XCL", "2"},
        {"TC_QUANT_BULK_XCL_K", "0"},
        {"TC_QUANT_BULK_PACE", "0"},
        {"TC_QUANT_BULK_FIRST", "4"}},
       true}};
  uint32_t seed = 5100;
  int ran = 0;
  for (tc_dtype_t wf : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K}) {
    // M = 1: K 11008 (688 items, 512 threads: two per thread), K 4096 (one round either way),
    // K 256 with 9-10 stages of 32 rows per CTA (slots reused: the paced waits' parity); M = 2, 4
    // (8 warps, 256 threads): two per thread from K 2048. Sizes keep the host's quantization
    // and float64 reference to ~4 s (the test binary runs under gpu-check's 120 s).
    // M = 1, N 16411, K 2048: the long shapes' 64 KB stages (Q4_0: 32 rows of 1152 bytes a
    // stage by default, 16 with STAGE_KB=32; the other formats with STAGE_KB=64).
    for (const LaunchCase& c : {LaunchCase{wf, 1, 1031, 11008}, LaunchCase{wf, 1, 257, 4096},
                                LaunchCase{wf, 1, 40009, 256}, LaunchCase{wf, 1, 16411, 2048},
                                LaunchCase{wf, 2, 517, 14336}, LaunchCase{wf, 2, 131, 2048},
                                LaunchCase{wf, 4, 257, 4096}}) {
      ASSERT_NO_FATAL_FAILURE(
          run_configs(c, configs, 5e-3, seed += 2, {kq::gemv_bulk_supports, kq::launch_gemv_bulk}));
      ++ran;
    }
  }
  EXPECT_EQ(ran, 21);
}

// The launcher arguments of a shape, no buffers: for the host's choices (stages, clusters).
kq::Args shape_args(tc_dtype_t w, int M, int N, int K) {
  kq::Args a;
  a.M = M;
  a.N = N;
  a.K = K;
  a.w_dtype = w;
  return a;
}

// The rows a stage of the bulk GEMV holds (needs no device: the host's geometry): 64 KB stages
// for Q4_0's long batch-1 shapes (K <= 4096, N >= 12288: the 7B QKV, gate+up and head), 32 KB
// elsewhere, TC_QUANT_BULK_STAGE_KB for every shape; R doubles while two rows more fit.
TEST(QuantCudaDecodeKnobs, BulkGemvStageChoice) {
  const auto rows = [](tc_dtype_t w, int M, int N, int K) {
    return kq::gemv_bulk_stage_rows(shape_args(w, M, N, K));
  };
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 1, 12288, 4096), 16);  // 2304-byte rows: 36.9 KB
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 1, 22016, 4096), 16);
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 1, 32000, 4096), 16);
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 1, 12287, 4096), 8);  // below the rule's N
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 1, 4096, 4096), 8);
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 1, 4096, 11008), 4);   // K > 4096: 6192-byte rows, 24.8 KB
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 2, 22016, 4096), 8);   // M = 1 only
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 1, 16411, 2048), 32);  // the knob test's case: 36.9 KB
  EXPECT_EQ(rows(TC_DTYPE_Q4_K, 1, 22016, 4096), 8);   // measured even in the step: 32 KB
  EXPECT_EQ(rows(TC_DTYPE_Q8_0, 1, 22016, 4096), 4);   // 4352-byte rows, 17.4 KB
  setenv("TC_QUANT_BULK_STAGE_KB", "32", 1);
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 1, 22016, 4096), 8);
  setenv("TC_QUANT_BULK_STAGE_KB", "64", 1);
  EXPECT_EQ(rows(TC_DTYPE_Q4_K, 1, 22016, 4096), 16);
  EXPECT_EQ(rows(TC_DTYPE_Q8_0, 1, 22016, 4096), 8);
  unsetenv("TC_QUANT_BULK_STAGE_KB");
  setenv("TC_QUANT_BULK_CTAS", "2", 1);  // two CTAs per SM: 32 KB stages
  EXPECT_EQ(rows(TC_DTYPE_Q4_0, 1, 22016, 4096), 8);
  unsetenv("TC_QUANT_BULK_CTAS");
}

// The stages in flight (needs no device: the host's choice): PACE=2 at M = 1 and 2 for Q4_0 and
// Q4_K, at least 48 KB in flight for Q4_K at M = 1 (3 stages of 8 rows of 2304 bytes, 2 of 4
// rows of 6192), Q8_0 unpaced; the knobs override.
TEST(QuantCudaDecodeKnobs, BulkGemvPaceChoice) {
  for (const char* k : {"TC_QUANT_BULK_PACE", "TC_QUANT_BULK_PACE_KB", "TC_QUANT_BULK_STAGES",
                        "TC_QUANT_BULK_STAGE_KB", "TC_QUANT_BULK_SMEM_KB", "TC_QUANT_BULK_CTAS",
                        "TC_QUANT_BULK_WARPS"})
    unsetenv(k);
  const auto pace = [](tc_dtype_t w, int M, int N, int K) {
    return kq::gemv_bulk_pace(shape_args(w, M, N, K));
  };
  EXPECT_EQ(pace(TC_DTYPE_Q4_0, 1, 12288, 4096), 2);
  EXPECT_EQ(pace(TC_DTYPE_Q4_0, 1, 4096, 4096), 2);
  EXPECT_EQ(pace(TC_DTYPE_Q4_0, 1, 4096, 11008), 2);
  EXPECT_EQ(pace(TC_DTYPE_Q4_K, 1, 12288, 4096), 3);
  EXPECT_EQ(pace(TC_DTYPE_Q4_K, 1, 4096, 4096), 3);
  EXPECT_EQ(pace(TC_DTYPE_Q4_K, 1, 4096, 11008), 2);
  EXPECT_EQ(pace(TC_DTYPE_Q4_K, 1, 4096, 256), 7);  // 32 rows of 144 bytes: 11 wanted, S - 1
  EXPECT_EQ(pace(TC_DTYPE_Q8_0, 1, 12288, 4096), 0);
  EXPECT_EQ(pace(TC_DTYPE_Q4_0, 2, 12288, 4096), 2);
  EXPECT_EQ(pace(TC_DTYPE_Q4_K, 2, 4096, 11008), 2);
  EXPECT_EQ(pace(TC_DTYPE_Q8_0, 2, 12288, 4096), 0);
  EXPECT_EQ(pace(TC_DTYPE_Q4_0, 3, 12288, 4096), 0);
  setenv("TC_QUANT_BULK_PACE_KB", "0", 1);
  EXPECT_EQ(pace(TC_DTYPE_Q4_K, 1, 12288, 4096), 2);
  setenv("TC_QUANT_BULK_PACE_KB", "64", 1);
  EXPECT_EQ(pace(TC_DTYPE_Q4_0, 1, 4096, 4096), 4);  // 18.4 KB stages
  EXPECT_EQ(pace(TC_DTYPE_Q4_K, 1, 4096, 11008), 3);
  unsetenv("TC_QUANT_BULK_PACE_KB");
  setenv("TC_QUANT_BULK_PACE", "0", 1);
  EXPECT_EQ(pace(TC_DTYPE_Q4_K, 1, 12288, 4096), 0);  // unpaced: no bytes rule
  EXPECT_EQ(pace(TC_DTYPE_Q4_0, 2, 12288, 4096), 0);
  unsetenv("TC_QUANT_BULK_PACE");
}

// Which launches take the 2-CTA cluster path (TC_QUANT_BULK_XCL / _XCL_K; needs no device: the
// choice is the host's), so that the same-bits configurations above are not vacuous.
TEST(QuantCudaDecodeKnobs, BulkGemvClusterChoice) {
  const auto cluster = [](tc_dtype_t w, int M, int N, int K) {
    return kq::gemv_bulk_cluster(shape_args(w, M, N, K));
  };
  EXPECT_EQ(cluster(TC_DTYPE_Q8_0, 1, 4096, 11008), 2);  // the default: Q8_0 above K = 4096
  EXPECT_EQ(cluster(TC_DTYPE_Q8_0, 1, 1031, 11008), 2);
  EXPECT_EQ(cluster(TC_DTYPE_Q8_0, 1, 4096, 4096), 1);
  EXPECT_EQ(cluster(TC_DTYPE_Q8_0, 2, 4096, 11008), 1);  // M = 1 only
  EXPECT_EQ(cluster(TC_DTYPE_Q4_0, 1, 4096, 11008), 1);
  EXPECT_EQ(cluster(TC_DTYPE_Q4_K, 1, 4096, 11008), 1);
  setenv("TC_QUANT_BULK_CTAS", "2", 1);  // two CTAs per SM: one-CTA kernels only
  EXPECT_EQ(cluster(TC_DTYPE_Q8_0, 1, 4096, 11008), 1);
  unsetenv("TC_QUANT_BULK_CTAS");
  setenv("TC_QUANT_BULK_WARPS", "8", 1);
  EXPECT_EQ(cluster(TC_DTYPE_Q8_0, 1, 4096, 11008), 1);
  unsetenv("TC_QUANT_BULK_WARPS");
  setenv("TC_QUANT_BULK_XCL", "1", 1);
  EXPECT_EQ(cluster(TC_DTYPE_Q8_0, 1, 4096, 11008), 1);
  setenv("TC_QUANT_BULK_XCL", "2", 1);
  setenv("TC_QUANT_BULK_XCL_K", "0", 1);
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K}) {
    EXPECT_EQ(cluster(w, 1, 257, 4096), 2) << w;
    EXPECT_EQ(cluster(w, 1, 40009, 256), 2) << w;
    EXPECT_EQ(cluster(w, 1, 3, 4096), 1) << w;  // one row tile: no second CTA for the cluster
  }
  EXPECT_EQ(cluster(TC_DTYPE_Q4_0, 1, 9, 4096), 2);  // stages of 8 rows: two tiles
  EXPECT_EQ(cluster(TC_DTYPE_Q4_0, 1, 8, 4096), 1);  // one
  setenv("TC_QUANT_BULK_DOT", "0", 1);               // the earlier dots: one-CTA kernels only
  EXPECT_EQ(cluster(TC_DTYPE_Q4_0, 1, 257, 4096), 1);
  unsetenv("TC_QUANT_BULK_DOT");
  unsetenv("TC_QUANT_BULK_XCL");
  unsetenv("TC_QUANT_BULK_XCL_K");
}

TEST(QuantCudaDecodeKnobs, XregKnobsMatchFloat64) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  const std::vector<Config> configs = {
      {"default", {}, true},
      {"hoist=0", {{"TC_QUANT_F16_HOIST", "0"}}, true},
      {"hoist=1", {{"TC_QUANT_F16_HOIST", "1"}}, true},
      {"xfirst=1", {{"TC_QUANT_F16_XFIRST", "1"}}, true},
      {"xfirst=2", {{"TC_QUANT_F16_XFIRST", "2"}}, true},
      {"xfirst=0", {{"TC_QUANT_F16_XFIRST", "0"}}, true},
      {"xpace=1", {{"TC_QUANT_F16_XPACE", "1"}}, true},
      {"xpace=2 xfirst=1", {{"TC_QUANT_F16_XPACE", "2"}, {"TC_QUANT_F16_XFIRST", "1"}}, true},
      {"xpref=1", {{"TC_QUANT_F16_XPREF", "1"}}, true},
      {"xtma=0", {{"TC_QUANT_F16_XTMA", "0"}}, true},
      {"xtma=0 xfirst=1", {{"TC_QUANT_F16_XTMA", "0"}, {"TC_QUANT_F16_XFIRST", "1"}}, true},
      {"xtma=1 xfirst=1", {{"TC_QUANT_F16_XTMA", "1"}, {"TC_QUANT_F16_XFIRST", "1"}}, true},
      {"xcl=2", {{"TC_QUANT_F16_XCL", "2"}}, false},
      {"xcl=2 xfirst=2 hoist=0",
       {{"TC_QUANT_F16_XCL", "2"}, {"TC_QUANT_F16_XFIRST", "2"}, {"TC_QUANT_F16_HOIST", "0"}},
       false}};
  uint32_t seed = 5300;
  int ran = 0;
  for (tc_dtype_t wf : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K}) {
    // K 4096 (XU 4; with XCL 2 CTAs of XU 2), K 1024 (XU 1; XCL: XU 2 with clamped units),
    // K 2816 (XU 3; XCL: uneven K ranges 1536 + 1280), K 11008 (clusters either way), many
    // passes per CTA (ring and slots wrap) and a partial last pass.
    for (const LaunchCase& c : {LaunchCase{wf, 8, 1031, 4096}, LaunchCase{wf, 5, 131, 1024},
                                LaunchCase{wf, 1, 257, 4096}, LaunchCase{wf, 3, 67, 2816},
                                LaunchCase{wf, 8, 131, 11008}, LaunchCase{wf, 7, 20011, 512}}) {
      kq::Args probe;
      probe.M = c.M;
      probe.N = c.N;
      probe.K = c.K;
      probe.w_dtype = c.w;
      const size_t work_bytes = kq::mma_f16_work_bytes(probe);  // 0 where the kernel splits no K
      DevMem work(std::max<size_t>(work_bytes, 16));
      ASSERT_NO_FATAL_FAILURE(run_configs(c, configs, 1e-3, seed += 2,
                                          {kq::mma_f16_supports, kq::launch_mma_f16}, work.p,
                                          work_bytes));
      ++ran;
    }
  }
  EXPECT_EQ(ran, 18);
}

// TC_QUANT_F16_I8=1 (X quantized to int8 in the X-in-registers kernel's registers, int8 MMAs):
// within the int8 MMA kernel's bound of float64, not the f16 kernel's bits (so the int8 path is
// the one that ran), the same bits with X loaded (XTMA=0); and X's non-finite values reach Y as
// in f16: a column with a NaN or an infinity gives no finite output, the others stay finite.
TEST(QuantCudaDecodeKnobs, XregI8MatchesFloat64AndKeepsNonFinite) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  uint32_t seed = 5700;
  for (tc_dtype_t wf : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0}) {
    for (const LaunchCase& c : {LaunchCase{wf, 8, 1031, 4096}, LaunchCase{wf, 5, 131, 1024},
                                LaunchCase{wf, 3, 67, 2816}, LaunchCase{wf, 7, 20011, 512}}) {
      const Weights wt = make_weights(c.w, c.N, c.K, seed += 2);
      Activations a = make_activations(TC_DTYPE_F32, c.M, c.K, seed + 1);
      const std::vector<double> ref = reference(wt, a, c.M, c.N, c.K);
      DevMem w(wt.bytes.size()), x(a.bytes()), y(ref.size() * 4);
      ASSERT_NO_FATAL_FAILURE(upload(wt, a, w, x));
      const std::string what = "w=" + std::to_string(c.w) + " M=" + std::to_string(c.M) +
                               " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K);
      auto run = [&](const char* i8, const char* xtma) {
        KnobScope scope;  // unset when the run returns
        scope.set("TC_QUANT_F16_I8", i8);
        scope.set("TC_QUANT_F16_XTMA", xtma);
        std::vector<float> got(ref.size());
        EXPECT_EQ(cudaMemsetAsync(y.p, 0xff, got.size() * 4, st), cudaSuccess);
        kq::Args args = launch_args(c, w, x, y);
        args.act8 = true;
        std::string why;
        EXPECT_TRUE(kq::mma_f16_supports(args, why)) << why;
        EXPECT_EQ(kq::launch_mma_f16(args, st), TC_SUCCESS) << tc_last_error_message();
        EXPECT_EQ(cudaMemcpyAsync(got.data(), y.p, got.size() * 4, cudaMemcpyDeviceToHost, st),
                  cudaSuccess);
        EXPECT_EQ(cudaStreamSynchronize(st), cudaSuccess);
        return got;
      };
      const std::vector<float> f16 = run("0", "1"), i8 = run("1", "1"), i8l = run("1", "0");
      EXPECT_LE(rms_scaled(f16, ref), 1e-3) << what;
      EXPECT_LE(rms_scaled(i8, ref), 5e-3) << what;
      EXPECT_NE(std::memcmp(i8.data(), f16.data(), i8.size() * 4), 0) << "I8 ran f16: " << what;
      EXPECT_EQ(std::memcmp(i8.data(), i8l.data(), i8.size() * 4), 0) << "XTMA=0: " << what;
      // A NaN in column 1, an infinity in column 2 (last block of the K range).
      a.f[size_t(1) * c.K + 100] = std::numeric_limits<float>::quiet_NaN();
      a.f[size_t(2) * c.K + c.K - 3] = std::numeric_limits<float>::infinity();
      ASSERT_NO_FATAL_FAILURE(upload(wt, a, w, x));
      for (const char* xtma : {"1", "0"}) {
        const std::vector<float> got = run("1", xtma);
        for (int m = 0; m < c.M; ++m)
          for (int n = 0; n < c.N; n += 7) {
            const bool finite = std::isfinite(got[size_t(m) * c.N + n]);
            ASSERT_EQ(finite, m != 1 && m != 2)
                << what << " xtma=" << xtma << " column " << m << " row " << n;
          }
      }
    }
  }
  cudaStreamDestroy(st);
}

}  // namespace
}  // namespace tc::quant_test
