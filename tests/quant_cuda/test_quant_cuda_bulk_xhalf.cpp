// Half-precision activations read as they are (f16, bf16): the bulk GEMV (M <= 4) widens each
// loaded half to f32 exactly and then quantizes as the f32 path does, so its Y must carry the
// bits of the f32 launch on the widened X, for every format, M 1..4, K on both sides of the
// X-in-registers limit (4096), the 2-CTA cluster path (X by halves), PDL on and off, Y
// poisoned before each launch; plus the bound against float64 of the values the kernel saw. The
// public calls: an 8-bit-activation GEMV / GEMM with f16 / bf16 X runs the row the f32 call
// runs with no widening kernel (no more kernel nodes in the captured graph than the f32 call:
// one for the bulk GEMV, one fewer where the wgmma kernel reads f16 X by TMA instead of after a
// convert kernel; the widening adds one on the exact path), with the bits of the f32 call on
// the widened X; M 1..2 the bulk GEMV, 5 the X-in-registers MMA, 16 / 24 / 32 the wgmma kernel.
// At M 32, K 11008 (Q4_0) f32 X goes through the wgmma kernel's convert kernel and f16 X is read
// by TMA as it is: exactly one kernel fewer, which pins that Q4_0's f16 X skips the conversion.
// Skips without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "cuda/quant_kernels.h"
#include "device_inputs.h"
#include "quant_api_util.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

TEST(QuantCudaHalfX, BulkGemvGivesTheBitsOfTheWidenedX) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  uint32_t seed = 9700;
  for (const LaunchCase& c : kBulkXCases) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    DevMem w(wt.bytes.size()), y(size_t(c.M) * c.N * 4);
    ASSERT_EQ(cudaMemcpy(w.p, wt.bytes.data(), wt.bytes.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    for (const tc_dtype_t xt : {TC_DTYPE_F16, TC_DTYPE_BF16}) {
      const HalfX x = half_x(xt, c.M, c.K, seed++);
      DevMem xh(x.h.size() * 2), xf(x.widened.bytes());
      ASSERT_EQ(cudaMemcpy(xh.p, x.h.data(), x.h.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(xf.p, x.widened.data(), x.widened.bytes(), cudaMemcpyHostToDevice),
                cudaSuccess);
      const std::vector<double> ref = reference(wt, x.widened, c.M, c.N, c.K);
      expect_bulk_bits_of_f32(c, w, xh.p, xt, xf.p, ref, 5e-3, xt == TC_DTYPE_F16 ? "f16" : "bf16",
                              y, st);
    }
  }
  cudaStreamDestroy(st);
}

TEST(QuantCudaHalfX, PublicCallsReadHalfXWithoutWidening) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS);
  Stream st(ctx.ctx);
  struct C {
    tc_dtype_t w;
    int M, N, K;
  };
  uint32_t seed = 9800;
  for (const C c : {C{TC_DTYPE_Q4_0, 1, 131, 4096}, C{TC_DTYPE_Q8_0, 1, 67, 11008},
                    C{TC_DTYPE_Q4_K, 2, 67, 2048}, C{TC_DTYPE_Q4_K, 5, 67, 1024},
                    C{TC_DTYPE_Q4_0, 16, 131, 4096}, C{TC_DTYPE_Q8_0, 24, 67, 1024},
                    C{TC_DTYPE_Q4_0, 32, 67, 11008}}) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    for (const tc_dtype_t xt : {TC_DTYPE_F16, TC_DTYPE_BF16}) {
      const HalfX x = half_x(xt, c.M, c.K, seed++);
      const size_t ny = size_t(c.M) * c.N;
      const std::vector<float> poison(ny, std::nanf(""));
      Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size()), XH(ctx.ctx, x.h.data(), x.h.size() * 2);
      Buf XF(ctx.ctx, x.widened.data(), x.widened.bytes());
      Buf Y(ctx.ctx, poison.data(), ny * 4), R(ctx.ctx, poison.data(), ny * 4);
      const std::string at = std::string(xt == TC_DTYPE_F16 ? "f16" : "bf16") +
                             " w=" + std::to_string(c.w) + " M=" + std::to_string(c.M);
      tc_quant_matmul_desc d{c.M, c.N, c.K, c.w, TC_DTYPE_F32, TC_DTYPE_F32, true, 0.0f};
      const auto fn = c.M <= 8 ? tc_gemv_quantized : tc_gemm_quantized;
      ASSERT_EQ(fn(ctx.ctx, &d, W.b, nullptr, XF.b, R.b), TC_SUCCESS) << tc_last_error_message();
      const std::string row = tc_last_instance();
      const auto kernels_of_call = [&](const Buf& X) {  // the kernels of one queued call on X
        return call_kernel_nodes(ctx.ctx, d, W.b, X.b, Y.b, st.s);
      };
      const int f32_kernels = kernels_of_call(XF);
      d.x_dtype = xt;
      ASSERT_EQ(fn(ctx.ctx, &d, W.b, nullptr, XH.b, Y.b), TC_SUCCESS) << tc_last_error_message();
      EXPECT_EQ(std::string(tc_last_instance()), row) << at;
      if (c.M <= 2) {
        EXPECT_EQ(row, "cuda_gemv_bulk_q8_dp4a") << at;
      }
      EXPECT_TRUE(same_bits(Y.floats(ny), R.floats(ny))) << at;
      EXPECT_GE(f32_kernels, 1) << at;
      // No widening kernel (it would come on top of the f32 call's kernels); one kernel fewer
      // where the wgmma kernel reads f16 X by TMA instead of after its convert kernel.
      const int half_kernels = kernels_of_call(XH);
      EXPECT_LE(half_kernels, f32_kernels) << at << " " << row << ": no widening kernel";
      if (c.M == 32 && c.K == 11008 && xt == TC_DTYPE_F16) {
        EXPECT_EQ(row, "cuda_mma_b32_f16_wgmma") << at;
        EXPECT_EQ(half_kernels, f32_kernels - 1) << at << ": f16 X read by TMA, no convert kernel";
      }
      // The exact path (f32 activations kept) widens X first: one kernel more.
      d.quantize_activations = false;
      d.x_dtype = TC_DTYPE_F32;
      const int exact_f32 = kernels_of_call(XF);
      d.x_dtype = xt;
      EXPECT_EQ(kernels_of_call(XH), exact_f32 + 1) << at << ": widening + the f32 row";
    }
  }
}

// Half X where no kernel reads it: int8 weights (their GEMV reads X as f32 or i8) and the exact
// path (f32 activations kept). launch_decode (the benchmark's launcher) refuses it with a
// message naming the dtype, before anything is launched, so this runs on any machine.
TEST(QuantCudaHalfX, LaunchDecodeRefusesHalfXWhereNoKernelReadsIt) {
  void* const fake = reinterpret_cast<void*>(uintptr_t(256));  // aligned, never dereferenced
  kq::Args a;
  a.M = 1;
  a.N = a.K = 4096;
  a.w = a.x = fake;
  a.y = static_cast<float*>(fake);
  for (const tc_dtype_t xt : {TC_DTYPE_F16, TC_DTYPE_BF16}) {
    a.x_dtype = xt;
    const std::string name = tc_dtype_name(xt);
    std::string why;
    kq::Args i8 = a;
    i8.w_dtype = TC_DTYPE_I8;
    EXPECT_FALSE(kq::i8_gemv_supports(i8, why)) << name;
    EXPECT_EQ(why, "x_dtype " + name + ": X must be f32 or i8");
    for (const kq::Args& b : {i8, a}) {  // a: Q4_0, act8 false
      const char* row = nullptr;
      EXPECT_EQ(kq::launch_decode(b, nullptr, &row), TC_ERROR_NOT_SUPPORTED) << name;
      EXPECT_STREQ(row, "none");
      EXPECT_NE(std::string(tc_last_error_message()).find("x_dtype " + name), std::string::npos)
          << tc_last_error_message();
    }
  }
}

}  // namespace
}  // namespace tc::quant_test
