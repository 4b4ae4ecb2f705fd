// The public calls captured into a CUDA graph, as an engine captures its decode step:
// tc_gemv_quantized_async / tc_gemm_quantized_async with TC_QUANT_WEIGHTS_CONSTANT (kernels
// launched with PDL) on the tc stream, f32 and f16 activations (f16 X read as it is by the
// decode rows; where a row widens it, the widened X sits in the stream's workspace: no
// allocation, no wait), replayed twice, give the synchronous calls' bits.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "quant_api_util.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

TEST(QuantCudaApi, CapturedCallsReplayTheSynchronousBits) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS);
  // The bulk GEMV, the f16 MMA, the batched-decode wgmma kernel (Q8_0 M = 24; the int8 MMA
  // before it took Q8_0), the f16 MMA with K split, and f16 X on the first two; every call 8-bit
  // activations (the decode rows) and the flag.
  const Case cases[] = {{TC_DTYPE_Q4_0, TC_DTYPE_F32, true, 1, 131, 4096},
                        {TC_DTYPE_Q4_K, TC_DTYPE_F32, true, 5, 67, 1024},
                        {TC_DTYPE_Q8_0, TC_DTYPE_F32, true, 24, 67, 1024},
                        {TC_DTYPE_Q4_0, TC_DTYPE_F32, true, 32, 131, 14336},
                        {TC_DTYPE_Q8_0, TC_DTYPE_F16, true, 1, 131, 4096},
                        {TC_DTYPE_Q4_0, TC_DTYPE_F16, true, 9, 67, 2048}};
  uint32_t seed = 9100;
  for (const Case& c : cases) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    Activations a = make_activations(TC_DTYPE_F32, c.M, c.K, seed++);
    std::vector<uint16_t> h(a.f.size());
    for (size_t i = 0; i < h.size(); ++i) h[i] = tc::f32_to_f16(a.f[i]);
    const bool f16 = c.x == TC_DTYPE_F16;
    const void* xd = f16 ? static_cast<const void*>(h.data()) : a.data();
    const size_t xb = f16 ? h.size() * 2 : a.bytes(), ny = size_t(c.M) * c.N;
    const std::vector<float> poison(ny, std::nanf(""));
    Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size()), X(ctx.ctx, xd, xb);
    Buf R(ctx.ctx, poison.data(), ny * 4), Y(ctx.ctx, poison.data(), ny * 4);
    tc_quant_matmul_desc d{c.M, c.N, c.K, c.w, c.x, TC_DTYPE_F32, c.act8, 0.0f};
    const auto fn = c.M <= 8 ? tc_gemv_quantized : tc_gemm_quantized;
    const auto fn_async = c.M <= 8 ? tc_gemv_quantized_async : tc_gemm_quantized_async;
    ASSERT_EQ(fn(ctx.ctx, &d, W.b, nullptr, X.b, R.b), TC_SUCCESS) << tc_last_error_message();
    const std::string row = tc_last_instance();
    const std::vector<float> want = R.floats(ny);
    d.flags = TC_QUANT_WEIGHTS_CONSTANT;
    Stream st(ctx.ctx);
    // One call outside the capture sizes the stream's workspace (growing it waits, which a
    // capture may not), then the poisoned Y is restored.
    ASSERT_EQ(fn_async(ctx.ctx, &d, W.b, nullptr, X.b, Y.b, st.s), TC_SUCCESS)
        << tc_last_error_message();
    ASSERT_EQ(tc_stream_sync(st.s), TC_SUCCESS) << tc_last_error_message();
    ASSERT_EQ(tc_buffer_write(Y.b, 0, poison.data(), ny * 4), TC_SUCCESS);
    auto cs = static_cast<cudaStream_t>(tc_stream_native_handle(st.s));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const tc_status_t queued = fn_async(ctx.ctx, &d, W.b, nullptr, X.b, Y.b, st.s);
    const std::string message = tc_last_error_message();
    ASSERT_EQ(cudaStreamEndCapture(cs, &graph), cudaSuccess) << row;
    ASSERT_EQ(queued, TC_SUCCESS) << message;
    EXPECT_EQ(std::string(tc_last_instance()), row);
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess) << row;
    // Nothing ran during the capture: Y still holds the poison.
    ASSERT_EQ(tc_stream_sync(st.s), TC_SUCCESS) << tc_last_error_message();
    EXPECT_TRUE(std::isnan(Y.floats(ny)[0])) << row;
    for (int rep = 0; rep < 2; ++rep) ASSERT_EQ(cudaGraphLaunch(exec, cs), cudaSuccess);
    ASSERT_EQ(tc_stream_sync(st.s), TC_SUCCESS) << tc_last_error_message();
    const std::vector<float> got = Y.floats(ny);
    EXPECT_TRUE(same_bits(got, want)) << row << " M=" << c.M << " K=" << c.K;
    // And float64 of the values the kernels saw, so that two equally wrong paths fail.
    if (f16)
      for (size_t i = 0; i < h.size(); ++i) a.f[i] = tc::f16_to_f32(h[i]);
    EXPECT_LE(rms_scaled(got, reference(wt, a, c.M, c.N, c.K)), 5e-3) << row << " M=" << c.M;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

}  // namespace
}  // namespace tc::quant_test
