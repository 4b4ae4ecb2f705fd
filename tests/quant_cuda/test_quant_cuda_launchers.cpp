// Each decode launcher of src/cuda/quant_kernels.h on its own, queued on a stream, against
// float64 of the dequantized weights, with Y poisoned (NaN) before every launch. The dispatch
// table reaches only the fastest row per shape, so the rows it shadows (the staged GEMVs behind
// the bulk GEMV and the int8 MMA) and the bulk kernels' edge cases (tail tiles and passes, ring
// wrap-around, every M, programmatic dependent launch back to back) are checked here. Skips
// without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cuda/quant_kernels.h"
#include "device_inputs.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

struct Launcher {
  const char* name;
  bool (*supports)(const kq::Args&, std::string&);
  tc_status_t (*launch)(const kq::Args&, void*);
  bool act8;  // quantizes X to 8 bits: bound 5e-3, else 1e-4
};

const Launcher kLaunchers[] = {
    {"bulk_q8", kq::gemv_bulk_supports, kq::launch_gemv_bulk, true},
    {"mma_bulk_q8", kq::mma_bulk_supports, kq::launch_mma_bulk, true},
    {"staged_q8", kq::gemv_staged_q8_supports, kq::launch_gemv_staged_q8, true},
    {"gemv_q8", kq::gemv_q8_supports, kq::launch_gemv_q8, true},
    {"staged_f32", kq::gemv_staged_supports, kq::launch_gemv_staged, false},
    {"gemv_f32", kq::gemv_supports, kq::launch_gemv, false},
    {"mma", kq::mma_supports, kq::launch_mma, false},
};

std::vector<LaunchCase> cases() {
  std::vector<LaunchCase> out;
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K}) {
    for (int M : {1, 2, 3, 4, 5, 8, 9, 17, 32}) {
      out.push_back({w, M, 131, 1024});
      if (M <= 4 || M == 8) out.push_back({w, M, 257, 4096});
    }
    // Several stages per CTA with a partial last tile; the widest decode K.
    out.push_back({w, 1, 1001, 2048});
    out.push_back({w, 1, 131, 14336});
    out.push_back({w, 3, 131, 11008});
    // The MMA bulk kernel's K splits (X of all K does not fit in shared memory): 2 and 4.
    out.push_back({w, 32, 257, 4096});
    out.push_back({w, 17, 131, 11008});
  }
  // Many tiles per CTA: the ring's slots are reused several times (barrier parity wraps).
  out.push_back({TC_DTYPE_Q4_0, 1, 40009, 256});
  out.push_back({TC_DTYPE_Q4_K, 2, 20011, 256});
  out.push_back({TC_DTYPE_Q4_0, 32, 1001, 2048});  // MMA: 4 column tiles, a partial pass
  // Wide K, many tiles per CTA: fewer stages than consumer groups (idle warps), slots reused,
  // an odd last tile (a row pair with one row).
  out.push_back({TC_DTYPE_Q4_0, 1, 4099, 14336});
  out.push_back({TC_DTYPE_Q8_0, 1, 4099, 14336});
  // The down projection's K at M = 1, 2: 8 stages of 4 rows hold a CTA's whole share at the
  // 227 KB cap (odd N: a partial last tile), and the wide K of the MMA cases at M = 2.
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q4_K}) {
    out.push_back({w, 1, 4099, 11008});
    out.push_back({w, 2, 1031, 11008});
  }
  out.push_back({TC_DTYPE_Q4_0, 2, 517, 14336});
  return out;
}

// The bulk GEMV's A/B knobs (gemv_quant_bulk.cu), cleared around every launch.
constexpr const char* kKnobs[] = {
    "TC_QUANT_BULK_CTAS",    "TC_QUANT_BULK_WARPS",  "TC_QUANT_BULK_XREG",
    "TC_QUANT_BULK_SMEM_KB", "TC_QUANT_BULK_STAGES", "TC_QUANT_BULK_FIRST",
    "TC_QUANT_BULK_RP",      "TC_QUANT_BULK_DOT",    "TC_QUANT_BULK_PACE",
    "TC_QUANT_BULK_PACE_KB", "TC_QUANT_BULK_XPAIRS", "TC_QUANT_BULK_XCL",
    "TC_QUANT_BULK_XCL_K"};

TEST(QuantCudaLaunchers, EveryLauncherMatchesFloat64) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;  // the launchers' device and runtime set-up, as in the public calls
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  std::map<std::string, int> ran;
  uint32_t seed = 900;
  for (const LaunchCase& c : cases()) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    const Activations a = make_activations(TC_DTYPE_F32, c.M, c.K, seed++);
    const std::vector<double> ref = reference(wt, a, c.M, c.N, c.K);
    DevMem w(wt.bytes.size()), x(a.bytes()), y(ref.size() * 4);
    ASSERT_NO_FATAL_FAILURE(upload(wt, a, w, x));
    kq::Args wa;  // the MMA bulk kernel's workspace (X as int8)
    wa.M = c.M;
    wa.K = c.K;
    wa.w_dtype = c.w;
    DevMem work(kq::mma_bulk_work_bytes(wa));
    for (const Launcher& l : kLaunchers) {
      kq::Args args = launch_args(c, w, x, y, work.p, kq::mma_bulk_work_bytes(wa));
      std::string why;
      if (!l.supports(args, why)) continue;
      // Twice back to back, the second under PDL (where the launcher has it), NaN between;
      // the bulk GEMV also in its other configurations (bench A/B knobs; the default keeps X
      // in registers at M = 1, K <= 4096, the knob takes it from shared memory; the 200 KB
      // cap; 12 stages, single rows and the producer waiting for X after 2; row pairs; at
      // M = 2 the last three only; at M = 1 the earlier nibble dots, which must give the same
      // bits as the default's (rep 0), and no wait for X, the earlier default).
      const bool bulk = l.launch == kq::launch_gemv_bulk;
      std::vector<int> reps = {0, 1};
      if (bulk && c.M == 1) reps.insert(reps.end(), {2, 3, 4});
      if (bulk && c.M <= 2) reps.insert(reps.end(), {5, 6, 7});
      if (bulk && c.M == 1) reps.insert(reps.end(), {8, 9});
      std::vector<float> first;
      for (int rep : reps) {
        args.pdl = rep % 2 == 1;
        for (const char* k : kKnobs) unsetenv(k);
        if (rep == 2) setenv("TC_QUANT_BULK_CTAS", "2", 1);
        if (rep == 3) setenv("TC_QUANT_BULK_WARPS", "8", 1);
        if (rep == 4) setenv("TC_QUANT_BULK_XREG", "0", 1);
        if (rep == 5) setenv("TC_QUANT_BULK_SMEM_KB", "200", 1);
        if (rep == 6) {
          setenv("TC_QUANT_BULK_STAGES", "12", 1);
          setenv("TC_QUANT_BULK_FIRST", "2", 1);
          setenv("TC_QUANT_BULK_RP", "1", 1);
        }
        if (rep == 7) setenv("TC_QUANT_BULK_RP", "2", 1);
        if (rep == 8) setenv("TC_QUANT_BULK_DOT", "0", 1);
        if (rep == 9) setenv("TC_QUANT_BULK_FIRST", "0", 1);
        ASSERT_EQ(cudaMemsetAsync(y.p, 0xff, ref.size() * 4, st), cudaSuccess);
        ASSERT_EQ(l.launch(args, st), TC_SUCCESS) << l.name << ": " << tc_last_error_message();
        std::vector<float> got(ref.size());
        ASSERT_EQ(cudaMemcpyAsync(got.data(), y.p, got.size() * 4, cudaMemcpyDeviceToHost, st),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess) << l.name;
        EXPECT_LE(rms_scaled(got, ref), l.act8 ? 5e-3 : 1e-4)
            << l.name << " w=" << c.w << " M=" << c.M << " N=" << c.N << " K=" << c.K
            << " pdl=" << args.pdl << " rep=" << rep;
        if (rep == 0) first = got;
        // Q4_0: integer sums times 16, scales over 16: exactly the same products. Q4_K's N16
        // dots also take its scales and mins into the integers: the same integer dots, other
        // roundings, so within rounding of the earlier form (far tighter than the 5e-3 bound).
        if (rep == 8 && c.w == TC_DTYPE_Q4_K) {
          EXPECT_LE(rms_scaled(got, std::vector<double>(first.begin(), first.end())), 1e-5)
              << l.name << " Q4_K nibble dots differ from the earlier form, N=" << c.N
              << " K=" << c.K;
        }
        if (rep == 8 && c.w != TC_DTYPE_Q4_K) {
          EXPECT_EQ(std::memcmp(got.data(), first.data(), got.size() * 4), 0)
              << l.name << " nibble dots differ from the earlier form, w=" << c.w << " N=" << c.N
              << " K=" << c.K;
        }
      }
      for (const char* k : kKnobs) unsetenv(k);
      ++ran[l.name];
    }
  }
  cudaStreamDestroy(st);
  for (const Launcher& l : kLaunchers) EXPECT_GT(ran[l.name], 0) << l.name << " never ran";
}

}  // namespace
}  // namespace tc::quant_test
