// The launchers behind the CUDA rows (src/cuda/quant_kernels.h), as bench/bench_decode.cpp
// uses them: queued on a foreign stream, captured into a CUDA graph and replayed, they give the
// very bytes of the public call (same kernel, same order of operations).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cuda/quant_kernels.h"
#include "device_inputs.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

namespace kq = tc::cuda::quant;

TEST(QuantCuda, GraphReplayEqualsPublicCall) {
  if (!tc_device_available(TC_DEVICE_CUDA)) GTEST_SKIP() << "no CUDA device";
  Context ctx;
  ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CUDA), TC_SUCCESS);
  struct Shape {
    tc_dtype_t w;
    int M;
  };
  for (const Shape s : {Shape{TC_DTYPE_Q4_0, 1}, Shape{TC_DTYPE_Q8_0, 1}, Shape{TC_DTYPE_Q4_K, 5},
                        Shape{TC_DTYPE_Q8_0, 24}}) {
    const int N = 45, K = 1024;
    const Weights wt = make_weights(s.w, N, K, 7 + s.M);
    const Activations a = make_activations(TC_DTYPE_F32, s.M, K, 9 + s.M);
    const tc_quant_matmul_desc d{s.M, N, K, s.w, TC_DTYPE_F32, TC_DTYPE_F32, false, 0};
    std::vector<float> api;
    ASSERT_EQ(run_api(ctx.ctx, d, wt, a, tc_gemv_quantized, &api), TC_SUCCESS)
        << tc_last_error_message();
    const std::string row = tc_last_instance();

    DevMem w(wt.bytes.size()), x(a.bytes()), y(api.size() * 4);
    ASSERT_NO_FATAL_FAILURE(upload(wt, a, w, x));
    ASSERT_EQ(cudaMemset(y.p, 0xff, api.size() * 4), cudaSuccess);  // NaN
    kq::Args args;
    args.M = s.M;
    args.N = N;
    args.K = K;
    args.w_dtype = s.w;
    args.w = w.p;
    args.x = x.p;
    args.y = static_cast<float*>(y.p);
    cudaStream_t st = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const char* kernel = nullptr;  // the launcher the table's decode rows would pick
    const tc_status_t launched = kq::launch_decode(args, st, &kernel);
    ASSERT_EQ(cudaStreamEndCapture(st, &graph), cudaSuccess);
    ASSERT_EQ(launched, TC_SUCCESS) << tc_last_error_message();
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int rep = 0; rep < 2; ++rep) ASSERT_EQ(cudaGraphLaunch(exec, st), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
    std::vector<float> got(api.size());
    ASSERT_EQ(cudaMemcpy(got.data(), y.p, got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_STREQ(kernel, row.c_str());
    EXPECT_EQ(std::memcmp(got.data(), api.data(), got.size() * 4), 0)
        << "w=" << s.w << " M=" << s.M << " " << row;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(st);
  }
}

}  // namespace
}  // namespace tc::quant_test
