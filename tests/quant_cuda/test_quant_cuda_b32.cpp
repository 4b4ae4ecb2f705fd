// The batched decode wgmma kernel (launch_mma_b32, src/cuda/quant_mma_b32.cu) on its own,
// against float64 of the dequantized weights, Y poisoned (NaN) and the workspace filled with
// different garbage before every launch (the K-split arrival words are never zeroed): Q4_0,
// Q4_K and Q8_0, every M 9..32 (and a few M <= 8; 33 is refused), odd N (partial 192- and
// 256-row tiles), K from one Q4_K block to 11008 (86 stages: splits of unequal length), in each
// knob form (the chosen K split, 3 forced splits, at most 2 splits, 2, 3 and 4 consumer warpgroups
// (the default: 3 for Q4_0 / Q4_K, 4 for Q8_0; 2 for Q4_K / Q8_0 where K > 8192 and N <= 8192,
// the K = 11008 cases here), 3 of them with 3 splits, the
// workspace fixup where the split could run inside clusters (the default) at the chosen and 3
// splits, its per-element and 8-loads forms, X converted by the kernel's helper warps or by the
// convert kernel (its default and its resident form) everywhere, the W boxes of 2, 4 or 8
// stages issued together (capped below the ring: a whole ring's batch would wait for a stage
// that is never released): those at the chosen split give the same bits as the default; W
// boxes of two stages (TC_QUANT_B32_WBOX=pair: even splits; K = 768 / 1280 are odd numbers of
// pairs) at the chosen and 3 splits, with the batched issue, the helpers' X and the convert
// kernel's, and the knob unset (the default: pairs for Q4_0, and Q4_K at M <= 8; every other
// form runs with WBOX=stage): the same bits as one-stage boxes with even splits,
// TC_QUANT_B32_EVEN=1; the others then keep the one-stage default's bits); launched twice back to
// back, the second under PDL: the same bits. Bound 1e-3: X and the dequantized weights are rounded
// to f16 (~3e-4 expected), the f16 MMA rows' bound; a wrong fragment, swizzle or split gives errors
// of order 1. The timings (TC_QUANT_B32_TIMING=1) are in test_quant_cuda_b32_timing.cpp. Skips
// without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/quant_kernels.h"
#include "cuda/quant_mma_b32.h"
#include "device_inputs.h"
#include "quant_api_util.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

std::vector<LaunchCase> cases() {
  std::vector<LaunchCase> out;
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q4_K, TC_DTYPE_Q8_0}) {
    for (int M = 9; M <= 32; ++M) out.push_back({w, M, M % 2 ? 131 : 67, M % 3 ? 512 : 1280});
    out.push_back({w, 1, 300, 256});      // one Q4_K block, N past one 256-row tile
    out.push_back({w, 8, 257, 768});      // M <= 8: n16, 6 stages
    out.push_back({w, 32, 67, 11008});    // 86 stages: unequal splits
    out.push_back({w, 17, 1001, 4096});   // 4 tiles, a partial last one
    out.push_back({w, 32, 4099, 2048});   // 17 tiles
    out.push_back({w, 13, 2053, 11008});  // ring wraps many times
    out.push_back({w, 5, 300, 1280});     // M 3..8, which the rows now route here by shape
    out.push_back({w, 3, 257, 11008});    // and two warpgroups by default (Q4_K / Q8_0)
  }
  return out;
}

TEST(QuantCudaB32, MatchesFloat64) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  uint32_t seed = 9100;
  int ran = 0;
  for (const LaunchCase& c : cases()) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    const Activations a = make_activations(TC_DTYPE_F32, c.M, c.K, seed++);
    const std::vector<double> ref = reference(wt, a, c.M, c.N, c.K);
    // Y and a guard of 32 rows after it (the kernel computes 16 or 32 X rows, more than M):
    // both poisoned before every launch, the guard must stay so.
    const size_t guard = size_t(32) * c.N;
    DevMem w(wt.bytes.size()), x(a.bytes()), y((ref.size() + guard) * 4);
    ASSERT_NO_FATAL_FAILURE(upload(wt, a, w, x));
    KnobScope scope;  // the forms' knobs, unset after the case however it ends
    struct Form {
      const char *splits, *wg, *fixup, *xconv, *cluster = "", *convert = "", *most = "";
      const char *even = "", *wbox = "", *batch = "";
    };
    // The default form's Y: the per-element, 8-loads and cluster fixups add in the same order
    // and the helper warps round X as the convert kernel does, so those forms (and the
    // default's choice of either) give the same bits.
    // Even splits with one-stage boxes: the pair boxes' reference bits, at the chosen and at
    // 3 forced splits.
    std::vector<float> chosen, even[2];
    for (const Form& f :
         {Form{"", "", "", ""},
          Form{"3", "", "", ""},
          Form{"", "2", "", ""},
          Form{"", "3", "", ""},  // Q8_0 runs 4 (quant_mma_b32_geometry.cu)
          Form{"", "4", "", ""},
          Form{"3", "3", "", ""},
          Form{"", "", "", "", "0"},
          Form{"", "", "elem", "", "0"},
          Form{"", "", "vec8", "", "0"},
          Form{"3", "", "", "", "0"},
          Form{"", "", "", "helpers"},
          Form{"", "", "", "kernel"},
          Form{"", "", "", "kernel", "", "resident"},
          Form{"", "", "", "", "", "", "2"},
          Form{"", "", "", "", "", "", "", "", "", "2"},
          Form{"", "", "", "", "", "", "", "", "", "4"},
          Form{"", "", "", "", "", "", "", "", "", "8"},  // capped at the ring less one
          Form{"", "", "", "", "", "", "", "1"},
          Form{"3", "", "", "", "", "", "", "1"},
          Form{"", "", "", "", "", "", "", "", "pair"},
          Form{"3", "", "", "", "", "", "", "", "pair"},
          Form{"", "", "", "", "", "", "", "", "pair", "4"},
          Form{"", "", "", "", "", "", "", "", "pair", "8"},  // Q8_0: 4 (a hang before the cap)
          Form{"", "", "", "helpers", "", "", "", "", "pair"},
          Form{"", "", "", "kernel", "", "", "", "", "pair", "2"},
          Form{"", "3", "", "", "", "", "", "", "pair"},
          Form{"", "4", "", "", "", "", "", "", "pair"},
          Form{"", "", "", "", "", "", "", "", "default"}}) {
      scope.set("TC_QUANT_B32_SPLITS", f.splits);
      scope.set("TC_QUANT_B32_WG", f.wg);
      scope.set("TC_QUANT_B32_FIXUP", f.fixup);
      scope.set("TC_QUANT_B32_XCONV", f.xconv);
      scope.set("TC_QUANT_B32_CLUSTER", f.cluster);
      scope.set("TC_QUANT_B32_CONVERT", f.convert);
      scope.set("TC_QUANT_B32_MAX_SPLITS", f.most);
      scope.set("TC_QUANT_B32_EVEN", f.even);
      // The other forms pin one-stage boxes; "default" leaves the knob unset (pairs for Q4_0,
      // and for Q4_K at M <= 8).
      const std::string wbox = f.wbox;
      scope.set("TC_QUANT_B32_WBOX", wbox.empty() ? "stage" : wbox == "default" ? "" : f.wbox);
      scope.set("TC_QUANT_B32_WBATCH", f.batch);
      const size_t work_bytes = kq::mma_b32_work_bytes(launch_args(c, w, x, y));
      DevMem work(std::max<size_t>(work_bytes, 16));
      kq::Args args = launch_args(c, w, x, y, work.p, work_bytes);
      std::string why;
      ASSERT_TRUE(kq::mma_b32_supports(args, why))
          << why << " w=" << c.w << " M=" << c.M << " N=" << c.N << " K=" << c.K;
      // The default split: comparable bits; even splits (EVEN=1 or pair boxes): `even`.
      // The default pairs Q4_0's boxes, and Q4_K's at M <= 8; the others keep one-stage boxes;
      // two warpgroups never pair.
      // Two warpgroups: forced, or by default for Q4_K / Q8_0 where K > 8192 and N <= 8192
      // (warpgroups()).
      const bool two =
          std::string(f.wg) == "2" || (!*f.wg && c.w != TC_DTYPE_Q4_0 && c.K > 8192 && c.N <= 8192);
      const bool paired =
          *f.wbox &&
          (wbox == "pair" || c.w == TC_DTYPE_Q4_0 || (c.w == TC_DTYPE_Q4_K && c.M <= 8)) && !two;
      const bool evens = *f.even || paired;
      const bool plain = !*f.splits && !*f.wg && !*f.most && !evens;
      std::vector<float> first;
      for (int rep = 0; rep < 2; ++rep) {
        args.pdl = rep == 1;
        // Stale scratch, different garbage each time: the K-split arrival words need no zeroing.
        ASSERT_EQ(cudaMemsetAsync(work.p, rep ? 0xa5 : 0x7f, std::max<size_t>(work_bytes, 16), st),
                  cudaSuccess);
        ASSERT_EQ(cudaMemsetAsync(y.p, 0xff, (ref.size() + guard) * 4, st), cudaSuccess);
        ASSERT_EQ(kq::launch_mma_b32(args, st), TC_SUCCESS) << tc_last_error_message();
        std::vector<float> got(ref.size());
        std::vector<uint32_t> tail(guard);
        ASSERT_EQ(cudaMemcpyAsync(got.data(), y.p, got.size() * 4, cudaMemcpyDeviceToHost, st),
                  cudaSuccess);
        ASSERT_EQ(cudaMemcpyAsync(tail.data(), static_cast<float*>(y.p) + ref.size(), guard * 4,
                                  cudaMemcpyDeviceToHost, st),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
        EXPECT_TRUE(std::all_of(tail.begin(), tail.end(), [](uint32_t v) { return v == ~0u; }))
            << "written past Y's M rows: w=" << c.w << " M=" << c.M << " N=" << c.N;
        EXPECT_LE(rms_scaled(got, ref), 1e-3)
            << "w=" << c.w << " M=" << c.M << " N=" << c.N << " K=" << c.K << " pdl=" << args.pdl
            << " splits=" << f.splits << " wg=" << f.wg << " fixup=" << f.fixup
            << " xconv=" << f.xconv << " cluster=" << f.cluster << " convert=" << f.convert
            << " even=" << f.even << " wbox=" << f.wbox << " batch=" << f.batch;
        if (rep == 0) first = got;
        EXPECT_TRUE(got == first) << "repeat differs: w=" << c.w << " M=" << c.M << " N=" << c.N
                                  << " K=" << c.K;
        const bool knobs = *f.fixup || *f.xconv || *f.cluster || *f.batch || *f.wbox;
        if (plain && !knobs) chosen = got;
        if (evens && !*f.most && !*f.wg) {
          std::vector<float>& e = even[*f.splits ? 1 : 0];
          if (*f.even) e = got;  // listed before the pair forms
          EXPECT_TRUE(got == e) << "wbox=" << f.wbox << " batch=" << f.batch << " xconv=" << f.xconv
                                << " splits=" << f.splits
                                << " differs from one-stage boxes with even splits: w=" << c.w
                                << " M=" << c.M << " N=" << c.N << " K=" << c.K;
        }
        if (plain && knobs) {
          EXPECT_TRUE(got == chosen) << "fixup=" << f.fixup << " xconv=" << f.xconv
                                     << " cluster=" << f.cluster << " batch=" << f.batch
                                     << " wbox=" << f.wbox << " differs from the default: w=" << c.w
                                     << " M=" << c.M << " N=" << c.N << " K=" << c.K;
        }
      }
    }
    ++ran;
  }
  cudaStreamDestroy(st);
  EXPECT_EQ(ran, int(cases().size()));
}

// The public call routes M 9..32 (Q4_0 / Q4_K / Q8_0, 8-bit-class activations allowed) to this
// kernel (TC_QUANT_B32_OLD_BELOW=0: wherever it runs), and back to the older f16 MMA kernel
// (Q8_0: the int8 MMA) with TC_QUANT_B32=0 or at M <= 16 where N * K is at or below
// TC_QUANT_B32_OLD_BELOW (by default nowhere); TC_QUANT_B32_Q8=0 sends Q8_0 back alone; M 3..8
// by shape class (PreferredAtSmallMByShape): this test's 203 x 1536 stays on the f16 MMA.
TEST(QuantCudaB32, PublicCallRouting) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  struct Want {
    tc_dtype_t w, x;
    int M;
    const char *knob, *below, *row, *q8 = "", *min_m = "";
  };
  uint32_t seed = 9700;
  const char* b32 = "cuda_mma_b32_f16_wgmma";
  const char* old = "cuda_mma_bulk_f16_hmma";
  const char* i8 = "cuda_mma_bulk_q8_i8mma";
  for (const Want c : {Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 9, "", "0", b32},
                       Want{TC_DTYPE_Q4_K, TC_DTYPE_F32, 32, "", "0", b32},
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 21, "", "0", b32},
                       // M = 8 by shape class: 203 x 1536 is small, the mma.sync kernel's
                       // (PreferredAtSmallMByShape has the 7B shapes), unless MIN_M says otherwise.
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 8, "", "0", old},
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 8, "", "", b32, "", "8"},
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 7, "", "", old},  // small N x K
                       Want{TC_DTYPE_Q4_K, TC_DTYPE_F32, 8, "", "", old},
                       Want{TC_DTYPE_Q4_K, TC_DTYPE_F32, 17, "0", "0", old},
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 13, "", "311808", old},  // 203 x 1536
                       Want{TC_DTYPE_Q4_K, TC_DTYPE_F32, 16, "", "", b32},
                       Want{TC_DTYPE_Q4_K, TC_DTYPE_F32, 13, "", "311807", b32},
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 17, "", "", b32},
                       Want{TC_DTYPE_Q8_0, TC_DTYPE_F32, 9, "", "", b32},
                       Want{TC_DTYPE_Q8_0, TC_DTYPE_F32, 32, "", "", b32},
                       Want{TC_DTYPE_Q8_0, TC_DTYPE_F32, 8, "", "", old},
                       Want{TC_DTYPE_Q8_0, TC_DTYPE_F32, 24, "0", "", i8},
                       Want{TC_DTYPE_Q8_0, TC_DTYPE_F32, 31, "", "", i8, "0"},
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 31, "", "", b32, "0"},
                       // TC_QUANT_B32_MIN_M=m: the wgmma kernel from M = m.
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 8, "", "", old, "", "9"},
                       Want{TC_DTYPE_Q4_K, TC_DTYPE_F32, 5, "", "", b32, "", "3"},
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F32, 7, "", "", old, "", "8"}}) {
    KnobScope scope;  // this case's knobs, unset after it however it ends
    scope.set("TC_QUANT_B32", c.knob);
    scope.set("TC_QUANT_B32_OLD_BELOW", c.below);
    scope.set("TC_QUANT_B32_Q8", c.q8);
    scope.set("TC_QUANT_B32_MIN_M", c.min_m);
    const int N = 203, K = 1536;
    const Weights wt = make_weights(c.w, N, K, seed++);
    const Activations a = make_activations(c.x, c.M, K, seed++);
    const std::vector<double> ref = reference(wt, a, c.M, N, K);
    std::vector<float> y;
    const tc_quant_matmul_desc d{c.M, N, K, c.w, c.x, TC_DTYPE_F32, true, 1.0f};
    ASSERT_EQ(run_api(ctx.ctx, d, wt, a, tc_gemm_quantized, &y), TC_SUCCESS)
        << tc_last_error_message();
    EXPECT_EQ(std::string(tc_last_instance()), c.row)
        << "w=" << c.w << " M=" << c.M << " knob=" << c.knob << " q8=" << c.q8
        << " min_m=" << c.min_m;
    // f16 rows (X and weights rounded to f16): 1e-3; the int8 MMA (X quantized to 8 bits): the
    // 8-bit class's 5e-3 (H200 00:26 UTC: 3.7e-3 at M = 24 and 31).
    const double bound = std::string(c.row).find("_q8_") != std::string::npos ? 5e-3 : 1e-3;
    EXPECT_LE(rms_scaled(y, ref), bound) << tc_last_instance() << " M=" << c.M;
  }
}

// The public call at M 3..8 takes the wgmma kernel by shape class and, for Q4_K, by X's type: f16
// X (read by TMA as it is) yes, bf16 X no (the mma.sync kernel reads it natively); small shapes
// stay on the mma.sync kernel. Against float64 of the X given (half X rounded, then widened).
TEST(QuantCudaB32, PublicCallRoutingAtSmallM) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  set_knob("TC_QUANT_B32_MIN_M", "");
  set_knob("TC_QUANT_B32_WG", "");
  struct Want {
    tc_dtype_t w, x;
    int M, N, K;
    const char* row;
  };
  const char* b32 = "cuda_mma_b32_f16_wgmma";
  const char* old = "cuda_mma_bulk_f16_hmma";
  uint32_t seed = 9900;
  for (const Want c : {Want{TC_DTYPE_Q4_K, TC_DTYPE_F16, 4, 1931, 8704, b32},
                       Want{TC_DTYPE_Q4_K, TC_DTYPE_BF16, 4, 1931, 8704, old},
                       Want{TC_DTYPE_Q8_0, TC_DTYPE_F32, 3, 1931, 8704, b32},
                       Want{TC_DTYPE_Q4_0, TC_DTYPE_F16, 5, 300, 1280, old}}) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    const HalfX x = half_x(c.x == TC_DTYPE_F32 ? TC_DTYPE_F16 : c.x, c.M, c.K, seed++);
    const std::vector<double> ref = reference(wt, x.widened, c.M, c.N, c.K);
    const size_t ny = size_t(c.M) * c.N;
    const std::vector<float> poison(ny, std::nanf(""));
    const bool half = c.x != TC_DTYPE_F32;
    Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size()), Y(ctx.ctx, poison.data(), ny * 4);
    Buf X = half ? Buf(ctx.ctx, x.h.data(), x.h.size() * 2)
                 : Buf(ctx.ctx, x.widened.data(), x.widened.bytes());
    const tc_quant_matmul_desc d{c.M, c.N, c.K, c.w, c.x, TC_DTYPE_F32, true, 1.0f};
    ASSERT_EQ(tc_gemm_quantized(ctx.ctx, &d, W.b, nullptr, X.b, Y.b), TC_SUCCESS)
        << tc_last_error_message();
    EXPECT_EQ(std::string(tc_last_instance()), c.row)
        << "w=" << c.w << " x=" << c.x << " M=" << c.M << " " << c.N << "x" << c.K;
    EXPECT_LE(rms_scaled(Y.floats(ny), ref), 1e-3) << tc_last_instance() << " M=" << c.M;
  }
}

// Which batched kernel the rows prefer at M 3..8, per shape class of the 7B step (host only, no
// device: mma_b32_preferred reads the problem and the knobs), M 9 and the knobs.
TEST(QuantCudaB32, PreferredAtSmallMByShape) {
  set_knob("TC_QUANT_B32", "");  // the other routing knobs at their defaults
  set_knob("TC_QUANT_B32_OLD_BELOW", "");
  struct Want {
    tc_dtype_t w, x;
    int M, N, K;
    bool b32;
    const char* min_m = "";
  };
  const tc_dtype_t f32 = TC_DTYPE_F32, f16 = TC_DTYPE_F16, q40 = TC_DTYPE_Q4_0, q4k = TC_DTYPE_Q4_K,
                   q80 = TC_DTYPE_Q8_0;
  for (const Want c :
       {Want{q40, f32, 8, 12288, 4096, true}, Want{q40, f16, 8, 4096, 4096, false},
        Want{q40, f32, 8, 22016, 4096, true}, Want{q40, f16, 8, 4096, 11008, true},
        Want{q4k, f32, 8, 12288, 4096, false}, Want{q4k, f16, 8, 12288, 4096, false},
        Want{q4k, f32, 8, 4096, 4096, false}, Want{q4k, f32, 8, 22016, 4096, false},
        Want{q4k, f16, 8, 22016, 4096, false}, Want{q4k, f32, 8, 4096, 11008, true},
        Want{q4k, f16, 8, 4096, 11008, true}, Want{q4k, TC_DTYPE_BF16, 8, 4096, 11008, false},
        Want{q4k, f32, 3, 4096, 11008, true}, Want{q4k, f32, 4, 22016, 4096, false},
        Want{q80, f16, 8, 12288, 4096, false}, Want{q80, f32, 8, 22016, 4096, false},
        Want{q80, f32, 8, 4096, 11008, true}, Want{q80, f16, 8, 4096, 4096, false},
        Want{q40, f32, 7, 22016, 4096, true},
        Want{q40, f32, 1, 22016, 4096, false},  // M <= 2: the bulk GEMV's
        Want{q80, f16, 2, 4096, 11008, false},
        Want{q4k, f32, 1, 4096, 4096, false, "3"},  // the knob's floor is 3
        Want{q4k, f32, 2, 4096, 4096, false, "3"}, Want{q40, f16, 4, 4096, 4096, false},
        Want{q4k, f16, 3, 4096, 11008, true}, Want{q80, f16, 6, 22016, 4096, false},
        Want{q80, f32, 5, 4096, 11008, true}, Want{q4k, f32, 9, 4096, 4096, true},
        Want{q80, f32, 9, 12288, 4096, true}, Want{q40, f32, 8, 22016, 4096, false, "9"},
        Want{q4k, f32, 8, 4096, 4096, true, "8"},
        // The thresholds: N K just above 4096^2, K 8192.
        Want{q40, f32, 8, 4097, 4096, true}, Want{q4k, f16, 8, 4096, 8448, true},
        Want{q4k, f16, 8, 4096, 8192, false}, Want{q80, f32, 8, 4096, 8192, false},
        Want{q80, f32, 8, 4096, 8448, true}}) {
    set_knob("TC_QUANT_B32_MIN_M", c.min_m);
    kq::Args a;
    a.M = c.M;
    a.N = c.N;
    a.K = c.K;
    a.w_dtype = c.w;
    a.x_dtype = c.x;
    EXPECT_EQ(kq::mma_b32_preferred(a), c.b32) << "w=" << c.w << " x=" << c.x << " M=" << c.M << " "
                                               << c.N << "x" << c.K << " min_m=" << c.min_m;
  }
  set_knob("TC_QUANT_B32_MIN_M", "");
  // TC_QUANT_B32_SMALL: exactly the listed classes, whatever the format; never the small shapes.
  struct Small {
    const char* v;
    int N, K;
    bool b32;
  };
  for (const Small c : {Small{"k", 4096, 11008, true}, Small{"k", 22016, 4096, false},
                        Small{"w", 22016, 4096, true}, Small{"w", 12288, 4096, false},
                        Small{"m", 12288, 4096, true}, Small{"m", 4096, 11008, false},
                        Small{"wkm", 4096, 4096, false}, Small{"-", 22016, 4096, false},
                        Small{"-", 4096, 11008, false}}) {
    set_knob("TC_QUANT_B32_SMALL", c.v);
    for (tc_dtype_t w : {q40, q4k, q80}) {
      kq::Args a;
      a.M = 8;
      a.N = c.N;
      a.K = c.K;
      a.w_dtype = w;
      a.x_dtype = f16;
      EXPECT_EQ(kq::mma_b32_preferred(a), c.b32)
          << "w=" << w << " " << c.N << "x" << c.K << " TC_QUANT_B32_SMALL=" << c.v;
    }
  }
  set_knob("TC_QUANT_B32_SMALL", "");
}

// What the kernel does not serve is refused with a reason, before anything is queued.
TEST(QuantCudaB32, RefusesWhatItCannotServe) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device (sm_90 check)";
  kq::Args a;
  a.M = 16;
  a.N = 4096;
  a.K = 4096;
  a.w_dtype = TC_DTYPE_Q4_0;
  a.w = a.x = reinterpret_cast<void*>(uintptr_t(256));
  a.y = reinterpret_cast<float*>(uintptr_t(256));
  a.work = reinterpret_cast<void*>(uintptr_t(256));
  a.work_bytes = kq::mma_b32_work_bytes(a);
  std::string why;
  EXPECT_TRUE(kq::mma_b32_supports(a, why)) << why;
  kq::Args b = a;
  b.M = 33;
  EXPECT_FALSE(kq::mma_b32_supports(b, why));
  b = a;
  b.w_dtype = TC_DTYPE_Q6_K;
  EXPECT_FALSE(kq::mma_b32_supports(b, why));
  b.w_dtype = TC_DTYPE_Q8_0;  // served; TC_QUANT_B32_Q8=0 sends it back to the int8 MMA
  b.work_bytes = kq::mma_b32_work_bytes(b);
  EXPECT_TRUE(kq::mma_b32_supports(b, why)) << why;
  setenv("TC_QUANT_B32_Q8", "0", 1);
  EXPECT_FALSE(kq::mma_b32_supports(b, why));
  EXPECT_EQ(why, "TC_QUANT_B32_Q8=0");
  EXPECT_TRUE(kq::mma_b32_supports(a, why)) << why;  // Q4_0 still served
  unsetenv("TC_QUANT_B32_Q8");
  b = a;
  b.K = 4000;  // rows not whole TMA lines
  EXPECT_FALSE(kq::mma_b32_supports(b, why));
  b = a;
  b.work_bytes = 16;  // not even X in f16 fits (its room is kept where the helpers convert it)
  EXPECT_FALSE(kq::mma_b32_supports(b, why));
  setenv("TC_QUANT_B32_XCONV", "helpers", 1);  // X converted in the kernel: K is not split
  EXPECT_EQ(kq::mma_b32_work_bytes(b), 0u);
  EXPECT_TRUE(kq::mma_b32_supports(b, why)) << why;
  unsetenv("TC_QUANT_B32_XCONV");
  setenv("TC_QUANT_B32_MAX_SPLITS", "4", 1);  // 4 splits' partials, not the chosen 8
  EXPECT_LT(kq::mma_b32_work_bytes(a), a.work_bytes);
  unsetenv("TC_QUANT_B32_MAX_SPLITS");
  b = a;
  b.work = nullptr;
  EXPECT_GT(a.work_bytes, 0u);  // N = 4096 splits K
  EXPECT_FALSE(kq::mma_b32_supports(b, why));
  b = a;
  b.x = reinterpret_cast<void*>(uintptr_t(264));
  EXPECT_FALSE(kq::mma_b32_supports(b, why));
  setenv("TC_QUANT_B32", "0", 1);
  EXPECT_FALSE(kq::mma_b32_supports(a, why));
  EXPECT_EQ(why, "TC_QUANT_B32=0");
  unsetenv("TC_QUANT_B32");
}

}  // namespace
}  // namespace tc::quant_test
