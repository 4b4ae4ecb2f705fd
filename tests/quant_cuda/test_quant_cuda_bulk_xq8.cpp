// Activations given as Q8_0 blocks (x_dtype Q8_0, as an RMSNorm that quantizes its output would
// hand them to the GEMVs): the bulk GEMV (M <= 4) dots the blocks' codes as they are. Its f32
// path quantizes dequant(X) back to the same codes and scales (ggml's reference quantizer puts a
// +-127 in every block, so amax / 127 is the block's scale again), so the Q8_0 launch must carry
// the bits of the f32 launch on the dequantized X: every format, M 1..4, K on both sides of the
// X-in-registers limit (4096), the 2-CTA cluster path (X by halves), PDL on and off, Y poisoned
// before each launch; and float64 of the dequantized values to 1e-5 (the codes are exact). The
// public calls: M 1..2 run the bulk GEMV with no conversion kernel (the f32 call's kernel count);
// M 5 and 16 (the MMA rows, which do not read Q8_0) dequantize X first (one kernel more) and then
// give the f32 call's bits on the dequantized X, as does the exact path. launch_decode refuses
// Q8_0 X where the bulk GEMV does not serve, naming the dtype (on any machine). Skips the GPU
// cases without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
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

TEST(QuantCudaQ8X, BulkGemvDotsTheCodes) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  uint32_t seed = 9900;
  for (const LaunchCase& c : kBulkXCases) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    const Q8X x = q8_x(c.M, c.K, seed++);
    DevMem w(wt.bytes.size()), y(size_t(c.M) * c.N * 4);
    DevMem xq(x.blocks.size()), xf(x.dequantized.bytes());
    ASSERT_EQ(cudaMemcpy(w.p, wt.bytes.data(), wt.bytes.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(xq.p, x.blocks.data(), x.blocks.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(xf.p, x.dequantized.data(), x.dequantized.bytes(), cudaMemcpyHostToDevice),
              cudaSuccess);
    const std::vector<double> ref = reference(wt, x.dequantized, c.M, c.N, c.K);
    expect_bulk_bits_of_f32(c, w, xq.p, TC_DTYPE_Q8_0, xf.p, ref, 1e-5, "q8_0", y, st);
  }
  cudaStreamDestroy(st);
}

TEST(QuantCudaQ8X, PublicCallsReadTheBlocksOrDequantizeThem) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS);
  Stream st(ctx.ctx);
  struct C {
    tc_dtype_t w;
    int M, N, K;
  };
  uint32_t seed = 9950;
  for (const C c : {C{TC_DTYPE_Q4_0, 1, 131, 4096}, C{TC_DTYPE_Q8_0, 1, 67, 11008},
                    C{TC_DTYPE_Q4_K, 2, 67, 2048}, C{TC_DTYPE_Q4_K, 5, 67, 1024},
                    C{TC_DTYPE_Q4_0, 16, 131, 4096}}) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    const Q8X x = q8_x(c.M, c.K, seed++);
    const size_t ny = size_t(c.M) * c.N;
    const std::vector<float> poison(ny, std::nanf(""));
    Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size());
    Buf XQ(ctx.ctx, x.blocks.data(), x.blocks.size());
    Buf XF(ctx.ctx, x.dequantized.data(), x.dequantized.bytes());
    Buf Y(ctx.ctx, poison.data(), ny * 4), R(ctx.ctx, poison.data(), ny * 4);
    const std::string at = "w=" + std::to_string(c.w) + " M=" + std::to_string(c.M);
    for (const bool act8 : {true, false}) {
      tc_quant_matmul_desc d{c.M, c.N, c.K, c.w, TC_DTYPE_F32, TC_DTYPE_F32, act8, 0.0f};
      const auto fn = c.M <= 8 ? tc_gemv_quantized : tc_gemm_quantized;
      ASSERT_EQ(fn(ctx.ctx, &d, W.b, nullptr, XF.b, R.b), TC_SUCCESS) << tc_last_error_message();
      const std::string row = tc_last_instance();
      const auto kernels_of_call = [&](const Buf& X) {  // the kernels of one queued call on X
        return call_kernel_nodes(ctx.ctx, d, W.b, X.b, Y.b, st.s);
      };
      const int f32_kernels = kernels_of_call(XF);
      d.x_dtype = TC_DTYPE_Q8_0;
      ASSERT_EQ(fn(ctx.ctx, &d, W.b, nullptr, XQ.b, Y.b), TC_SUCCESS) << tc_last_error_message();
      EXPECT_EQ(std::string(tc_last_instance()), row) << at << " act8=" << act8;
      EXPECT_TRUE(same_bits(Y.floats(ny), R.floats(ny))) << at << " act8=" << act8 << " " << row;
      EXPECT_GE(f32_kernels, 1) << at;
      const bool native = act8 && c.M <= 2;
      if (native) {
        EXPECT_EQ(row, "cuda_gemv_bulk_q8_dp4a") << at;
      }
      EXPECT_EQ(kernels_of_call(XQ), f32_kernels + (native ? 0 : 1))
          << at << " act8=" << act8 << " " << row << ": dequantize X only where not read";
    }
  }
}

// Q8_0 X where the bulk GEMV does not serve (M > 4 at act8, the exact path, int8 weights):
// launch_decode (the benchmark's launcher) refuses it with a message naming the dtype, before
// anything is launched, so this runs on any machine.
TEST(QuantCudaQ8X, LaunchDecodeRefusesQ8XWhereNoKernelReadsIt) {
  void* const fake = reinterpret_cast<void*>(uintptr_t(256));  // aligned, never dereferenced
  kq::Args a;
  a.M = 1;
  a.N = a.K = 4096;
  a.w = a.x = fake;
  a.y = static_cast<float*>(fake);
  a.x_dtype = TC_DTYPE_Q8_0;
  std::string why;
  EXPECT_TRUE(kq::gemv_bulk_supports(a, why)) << why;
  kq::Args m5 = a, i8 = a;
  m5.M = 5;
  m5.act8 = true;
  i8.w_dtype = TC_DTYPE_I8;
  EXPECT_FALSE(kq::gemv_bulk_supports(m5, why));
  for (const kq::Args& b : {m5, a, i8}) {  // a: Q4_0, act8 false
    const char* row = nullptr;
    EXPECT_EQ(kq::launch_decode(b, nullptr, &row), TC_ERROR_NOT_SUPPORTED) << b.M;
    EXPECT_STREQ(row, "none");
    EXPECT_NE(std::string(tc_last_error_message()).find("x_dtype q8_0"), std::string::npos)
        << tc_last_error_message();
  }
}

}  // namespace
}  // namespace tc::quant_test
