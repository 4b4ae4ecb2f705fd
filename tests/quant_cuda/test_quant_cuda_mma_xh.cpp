// Half-precision X read natively by the batched-decode kernels (M 3..32): the f16 MMA
// (launch_mma_f16, quant_mma_f16.cu), the wgmma kernel (launch_mma_b32, quant_mma_b32*.cu) and the
// int8 MMA (launch_mma_bulk, quant_mma_bulk.cu) take Args::x_dtype f16 or bf16 and widen each
// value to f32 (exact) before the f32 path's rounding, so the contract is bit identity: X as f16
// or bf16 gives the bits of the same values widened to f32 and passed as f32 X. Checked on Q4_0,
// Q8_0 and Q4_K, M 3, 8, 9, 13, 16, 32, odd N, K 256 / 4096 / 11008, with each family's ways of
// reading X (f16 MMA: in the kernel, and the convert kernel with K split in 3, the
// X-in-registers kernel loading X or bulk-copying its rows (TC_QUANT_F16_XTMA), and with X
// quantized to int8 in its registers (TC_QUANT_F16_I8, int8 MMAs, bound 5e-3); wgmma: the
// helper warps, the convert kernel and its resident form, f16 X read by TMA as it is (every
// format) and through the convert kernel, 3 forced K splits; int8 MMA: the
// quantize kernel, K split over launches at M 32, K 11008), without and with PDL, Y poisoned
// (NaN) before every launch; and the f16 run against float64 of the dequantized weights times
// the f16 values (the families' bounds: 1e-3 for f16 X and weights, 5e-3 for 8-bit X), so that
// a half path that read the wrong bytes cannot pass by agreeing with a wrong f32 path. The GPU
// cases skip without a CUDA device (the wgmma ones without sm_90); which x dtypes the three
// accept and refuse (with a reason) is checked on any machine.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "cuda/quant_kernels.h"
#include "cuda/quant_mma_b32.h"
#include "device_inputs.h"
#include "quant_api_util.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

struct Family {
  const char* name;
  size_t (*work)(const kq::Args&);
  bool (*supports)(const kq::Args&, std::string&);
  tc_status_t (*launch)(const kq::Args&, void*);
  double bound;  // rms_scaled against float64
  // Knob forms: {variable, value} pairs ("" unsets), each run as a whole.
  std::vector<std::vector<std::pair<const char*, const char*>>> forms;
};

std::vector<Family> families() {
  // f16 MMA: the pass-barrier kernel (X converted in the kernel), and with K split in 3 (the
  // convert kernel); and as chosen, where M <= 8 is the X-in-registers kernel's
  // (quant_mma_xreg.cu; at K > 4096 in 2-CTA clusters).
  return {{"mma_f16",
           kq::mma_f16_work_bytes,
           kq::mma_f16_supports,
           kq::launch_mma_f16,
           1e-3,
           {{{"TC_QUANT_F16_XREG", "0"}, {"TC_QUANT_F16_SPLITS", ""}},
            {{"TC_QUANT_F16_XREG", "0"}, {"TC_QUANT_F16_SPLITS", "3"}},
            {{"TC_QUANT_F16_XREG", ""}, {"TC_QUANT_F16_SPLITS", ""}},
            // X-in-registers with X loaded instead of brought by bulk copies (the default since
            // the fifteenth session, TC_QUANT_F16_XTMA; at M 5, K 11008 half X in 2-CTA clusters,
            // each rank its K range; Q8_0's f32 X there too large for the copies, so loaded).
            {{"TC_QUANT_F16_XREG", ""}, {"TC_QUANT_F16_SPLITS", ""}, {"TC_QUANT_F16_XTMA", "0"}}}},
          // X-in-registers with X quantized to int8 in registers and int8 MMAs
          // (TC_QUANT_F16_I8=1, where 8-bit activations are allowed: Q4_0 / Q8_0, M <= 8, no K
          // split; elsewhere the f16 kernel), X by bulk copies and by loads. X's codes are
          // ggml's Q8 ones, so the bound is the int8 MMA kernel's.
          {"mma_f16_i8",
           kq::mma_f16_work_bytes,
           [](const kq::Args& a, std::string& why) {
             kq::Args b = a;
             b.act8 = true;
             return kq::mma_f16_supports(b, why);
           },
           [](const kq::Args& a, void* s) {
             kq::Args b = a;
             b.act8 = true;
             return kq::launch_mma_f16(b, s);
           },
           5e-3,
           {{{"TC_QUANT_F16_I8", "1"}}, {{"TC_QUANT_F16_I8", "1"}, {"TC_QUANT_F16_XTMA", "0"}}}},
          {"mma_b32",
           kq::mma_b32_work_bytes,
           kq::mma_b32_supports,
           kq::launch_mma_b32,
           1e-3,
           {{},
            {{"TC_QUANT_B32_XCONV", "helpers"}},
            {{"TC_QUANT_B32_XCONV", "kernel"}},
            {{"TC_QUANT_B32_XCONV", "kernel"}, {"TC_QUANT_B32_CONVERT", "resident"}},
            // f16 X: through the convert kernel instead of read as it is.
            {{"TC_QUANT_B32_XCONV", "kernel"}, {"TC_QUANT_B32_CONVERT", "always"}},
            {{"TC_QUANT_B32_SPLITS", "3"}}}},
          {"mma_bulk",
           kq::mma_bulk_work_bytes,
           kq::mma_bulk_supports,
           kq::launch_mma_bulk,
           5e-3,
           {{}}}};
}

// The f16 MMA's forced K split needs 3 pieces of 256; its "as chosen" forms (2, and 3 with
// TC_QUANT_F16_XTMA=0) differ from the first only where the X-in-registers kernel may serve (M <=
// 8).
bool form_applies(const Family& f, size_t form, const LaunchCase& c) {
  if (std::string(f.name) == "mma_f16" && form == 1) return c.K >= 768;
  if (std::string(f.name) == "mma_f16" && form >= 2) return c.M <= 8;
  if (std::string(f.name) == "mma_f16_i8") return c.M <= 8;
  return true;
}

// Sets a form's knobs for its scope.
struct Knobs {
  const std::vector<std::pair<const char*, const char*>>& kv;
  explicit Knobs(const std::vector<std::pair<const char*, const char*>>& f) : kv(f) {
    for (const auto& [k, v] : kv) set_knob(k, v);
  }
  ~Knobs() {
    for (const auto& [k, v] : kv) set_knob(k, "");
  }
};

std::vector<LaunchCase> cases() {
  std::vector<LaunchCase> out;
  // {M, N, K}: one, two and four column tiles; K of one to 43 Q4_K blocks.
  // M = 5 at K = 11008: the X-in-registers kernel's 2-CTA clusters.
  constexpr int kShapes[][3] = {{3, 131, 256},  {8, 67, 4096},  {5, 67, 11008}, {9, 131, 11008},
                                {13, 257, 256}, {16, 37, 4096}, {32, 67, 11008}};
  for (tc_dtype_t w : {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, TC_DTYPE_Q4_K})
    for (const auto& sh : kShapes) out.push_back({w, sh[0], sh[1], sh[2]});
  return out;
}

// X on the device in each form: f16 and bf16 (the values of `a` rounded), and each widened to
// f32.
struct DeviceX {
  DevMem h, b, hf, bf;
  explicit DeviceX(size_t n) : h(n * 2), b(n * 2), hf(n * 4), bf(n * 4) {}
};

// Y of one launch of `f` on `a`, poisoned (NaN) before.
std::vector<float> run(const Family& f, const kq::Args& a, cudaStream_t st) {
  const size_t n = size_t(a.M) * a.N;
  std::vector<float> got(n);
  EXPECT_EQ(cudaMemsetAsync(a.y, 0xff, n * 4, st), cudaSuccess);
  EXPECT_EQ(f.launch(a, st), TC_SUCCESS) << f.name << ": " << tc_last_error_message();
  EXPECT_EQ(cudaMemcpyAsync(got.data(), a.y, n * 4, cudaMemcpyDeviceToHost, st), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  return got;
}

TEST(QuantCudaMmaXh, HalfXGivesTheBitsOfWidenedX) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS) << tc_last_error_message();
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  uint32_t seed = 12100;
  int checked = 0, b32_skipped = 0;
  for (const LaunchCase& c : cases()) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    // The same f32 values rounded to f16 and to bf16 (one seed for both).
    const uint32_t xs = seed++;
    const HalfX hx = half_x(TC_DTYPE_F16, c.M, c.K, xs), bx = half_x(TC_DTYPE_BF16, c.M, c.K, xs);
    const size_t n = hx.h.size();
    const std::vector<double> ref = reference(wt, hx.widened, c.M, c.N, c.K);  // the f16 runs
    DevMem w(wt.bytes.size()), y(size_t(c.M) * c.N * 4);
    DeviceX x(n);
    ASSERT_EQ(cudaMemcpy(w.p, wt.bytes.data(), wt.bytes.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(x.h.p, hx.h.data(), n * 2, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(x.b.p, bx.h.data(), n * 2, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(x.hf.p, hx.widened.f.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(x.bf.p, bx.widened.f.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
    for (const Family& f : families()) {
      for (size_t form = 0; form < f.forms.size(); ++form) {
        if (!form_applies(f, form, c)) continue;
        const Knobs knobs(f.forms[form]);
        kq::Args args = launch_args(c, w, x.h, y);
        args.x_dtype = TC_DTYPE_F16;
        const size_t work_bytes = f.work(args);
        DevMem work(std::max<size_t>(work_bytes, 16));
        args.work = work.p;
        args.work_bytes = work_bytes;
        const std::string where = std::string(f.name) + " form " + std::to_string(form) +
                                  " w=" + std::to_string(c.w) + " M=" + std::to_string(c.M) +
                                  " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K);
        std::string why;
        if (!f.supports(args, why) && why == "needs sm_90 (wgmma)") {
          ++b32_skipped;
          continue;
        }
        ASSERT_TRUE(f.supports(args, why)) << why << " " << where;
        for (int pdl = 0; pdl < 2; ++pdl) {
          args.pdl = pdl == 1;
          struct Pair {
            tc_dtype_t dt;
            const DevMem *half, *wide;
          };
          for (const Pair& p :
               {Pair{TC_DTYPE_F16, &x.h, &x.hf}, Pair{TC_DTYPE_BF16, &x.b, &x.bf}}) {
            kq::Args ah = args, af = args;
            ah.x_dtype = p.dt;
            ah.x = p.half->p;
            af.x_dtype = TC_DTYPE_F32;
            af.x = p.wide->p;
            ASSERT_TRUE(f.supports(ah, why)) << why << " " << where;
            const std::vector<float> got = run(f, ah, st), want = run(f, af, st);
            EXPECT_TRUE(same_bits(got, want))
                << where << " pdl=" << pdl << " x=" << tc_dtype_name(p.dt)
                << ": not the bits of X widened to f32";
            if (p.dt == TC_DTYPE_F16) {
              EXPECT_LE(rms_scaled(got, ref), f.bound) << where << " pdl=" << pdl;
            }
            ++checked;
          }
        }
      }
    }
  }
  cudaStreamDestroy(st);
  EXPECT_GT(checked, 0);
  if (b32_skipped > 0) std::printf("[ note ] wgmma cases skipped (not sm_90): %d\n", b32_skipped);
}

// f32, f16 and bf16 X are accepted (16-byte aligned); other x dtypes are refused with a reason
// that names them, before anything is queued (no device needed: the wgmma kernel checks X
// before the device).
TEST(QuantCudaMmaXh, SupportsNamesTheXDtype) {
  void* const fake = reinterpret_cast<void*>(uintptr_t(256));  // aligned, never dereferenced
  kq::Args a;
  a.M = 16;
  a.N = a.K = 4096;
  a.w = a.x = a.work = fake;
  a.y = static_cast<float*>(fake);
  a.work_bytes = size_t(1) << 30;
  std::string why;
  for (tc_dtype_t x : {TC_DTYPE_F32, TC_DTYPE_F16, TC_DTYPE_BF16}) {
    kq::Args b = a;
    b.x_dtype = x;
    EXPECT_TRUE(kq::mma_f16_supports(b, why)) << why << " x=" << tc_dtype_name(x);
    EXPECT_TRUE(kq::mma_bulk_supports(b, why)) << why << " x=" << tc_dtype_name(x);
    // The wgmma kernel also needs sm_90: where it refuses, not for X.
    const bool b32 = kq::mma_b32_supports(b, why);
    if (!b32) {
      EXPECT_EQ(why.find("X must be"), std::string::npos) << why << " x=" << tc_dtype_name(x);
    }
    kq::Args g = b;  // the bulk GEMV (M <= 4)
    g.M = 1;
    EXPECT_TRUE(kq::gemv_bulk_supports(g, why)) << why << " x=" << tc_dtype_name(x);
    b.x = g.x = reinterpret_cast<void*>(uintptr_t(264));  // halves too need 16-byte alignment
    EXPECT_FALSE(kq::mma_f16_supports(b, why)) << tc_dtype_name(x);
    EXPECT_FALSE(kq::mma_bulk_supports(b, why)) << tc_dtype_name(x);
    EXPECT_FALSE(kq::gemv_bulk_supports(g, why)) << tc_dtype_name(x);
    why.clear();
    if (b32) {  // a device it serves: refused for X's alignment
      EXPECT_FALSE(kq::mma_b32_supports(b, why)) << tc_dtype_name(x);
      EXPECT_NE(why.find("aligned"), std::string::npos) << why << " x=" << tc_dtype_name(x);
    }
  }
  // M <= 8: the X-in-registers kernel (what the f16 MMA hands M <= 8 to) takes half X too, as
  // does the pass-barrier kernel with it off (TC_QUANT_F16_XREG=0).
  for (tc_dtype_t x : {TC_DTYPE_F16, TC_DTYPE_BF16}) {
    kq::Args b = a;
    b.M = 8;
    b.x_dtype = x;
    EXPECT_TRUE(kq::mma_f16_supports(b, why)) << why << " x=" << tc_dtype_name(x);
    set_knob("TC_QUANT_F16_XREG", "0");
    EXPECT_TRUE(kq::mma_f16_supports(b, why)) << why << " x=" << tc_dtype_name(x);
    set_knob("TC_QUANT_F16_XREG", "");
  }
  for (tc_dtype_t x : {TC_DTYPE_I8, TC_DTYPE_I32, TC_DTYPE_TF32, TC_DTYPE_Q4_0}) {
    kq::Args b = a;
    b.x_dtype = x;
    const std::string want =
        std::string("x_dtype ") + tc_dtype_name(x) + ": X must be f32, f16 or bf16";
    why.clear();
    EXPECT_FALSE(kq::mma_f16_supports(b, why));
    EXPECT_EQ(why, want);
    why.clear();
    EXPECT_FALSE(kq::mma_bulk_supports(b, why));
    EXPECT_EQ(why, want);
    why.clear();
    EXPECT_FALSE(kq::mma_b32_supports(b, why));
    EXPECT_EQ(why, want);
    kq::Args g = b;
    g.M = 1;
    why.clear();
    EXPECT_FALSE(kq::gemv_bulk_supports(g, why));
    EXPECT_EQ(why, want);
  }
}

}  // namespace
}  // namespace tc::quant_test
