// Device memory, cases and launcher arguments for the launcher-level quant CUDA tests
// (test_quant_cuda_graph.cpp, _launchers.cpp, _mma_f16.cpp, _bulk_xhalf.cpp, _bulk_xq8.cpp), which
// call the kernels' launchers on their own streams.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/quant_kernels.h"
#include "quant_api_util.h"
#include "quant_test_util.h"

namespace tc::quant_test {

// Sets the environment variable `name` to `v` ("" unsets it): the knob forms of the tests.
inline void set_knob(const char* name, const char* v) {
  if (*v)
    setenv(name, v, 1);
  else
    unsetenv(name);
}

// Knobs set for a scope: each one named to set() is unset when the scope ends, also when a
// fatal assertion returns early (so that a failure does not leave a knob set for the tests
// after it).
class KnobScope {
 public:
  KnobScope() = default;
  KnobScope(const KnobScope&) = delete;
  KnobScope& operator=(const KnobScope&) = delete;
  ~KnobScope() {
    for (const std::string& n : names_) unsetenv(n.c_str());
  }
  void set(const char* name, const char* v) {
    set_knob(name, v);
    for (const std::string& n : names_)
      if (n == name) return;
    names_.emplace_back(name);
  }

 private:
  std::vector<std::string> names_;
};

struct DevMem {
  void* p = nullptr;
  explicit DevMem(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  ~DevMem() { cudaFree(p); }
};

// Copies W and X to the device and waits: a copy from pageable memory may return before its
// DMA lands, and the kernels under test run on non-blocking streams, which do not wait for the
// legacy stream. Call as ASSERT_NO_FATAL_FAILURE(upload(...)).
inline void upload(const Weights& wt, const Activations& a, const DevMem& w, const DevMem& x) {
  ASSERT_EQ(cudaMemcpy(w.p, wt.bytes.data(), wt.bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(x.p, a.data(), a.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// A launcher-level case: the weight format and the shape.
struct LaunchCase {
  tc_dtype_t w;
  int M, N, K;
};

// The bulk GEMV's cases for X read in another type than f32 (test_quant_cuda_bulk_xhalf.cpp,
// _xq8.cpp): every format at M = 1 on both sides of the X-in-registers limit (K = 4096), M 2..4,
// and a short K with many row tiles a CTA.
inline constexpr LaunchCase kBulkXCases[] = {
    {TC_DTYPE_Q4_0, 1, 131, 4096}, {TC_DTYPE_Q4_0, 1, 67, 11008}, {TC_DTYPE_Q8_0, 1, 131, 4096},
    {TC_DTYPE_Q8_0, 1, 67, 11008}, {TC_DTYPE_Q4_K, 1, 131, 4096}, {TC_DTYPE_Q4_K, 1, 67, 11008},
    {TC_DTYPE_Q4_0, 2, 131, 2048}, {TC_DTYPE_Q8_0, 3, 67, 4096},  {TC_DTYPE_Q4_K, 4, 67, 1024},
    {TC_DTYPE_Q4_0, 1, 1031, 256}};

// The launcher arguments of case `c` on uploaded W, X and Y (and a workspace, where given).
inline cuda::quant::Args launch_args(const LaunchCase& c, const DevMem& w, const DevMem& x,
                                     const DevMem& y, void* work = nullptr, size_t work_bytes = 0) {
  cuda::quant::Args a;
  a.M = c.M;
  a.N = c.N;
  a.K = c.K;
  a.w_dtype = c.w;
  a.w = w.p;
  a.x = x.p;
  a.y = static_cast<float*>(y.p);
  a.work = work;
  a.work_bytes = work_bytes;
  return a;
}

// The bulk GEMV (8-bit activations) on case `c` with X of type xt at `x`, Y poisoned with NaN
// first; Y as the host sees it after the launch (test_quant_cuda_bulk_xhalf.cpp, _xq8.cpp).
inline std::vector<float> run_bulk(const LaunchCase& c, const DevMem& w, const void* x,
                                   tc_dtype_t xt, const DevMem& y, bool pdl, cudaStream_t st) {
  const size_t ny = size_t(c.M) * c.N;
  EXPECT_EQ(cudaMemsetAsync(y.p, 0xff, ny * 4, st), cudaSuccess);  // NaN everywhere
  cuda::quant::Args a;
  a.M = c.M;
  a.N = c.N;
  a.K = c.K;
  a.w_dtype = c.w;
  a.x_dtype = xt;
  a.w = w.p;
  a.x = x;
  a.y = static_cast<float*>(y.p);
  a.act8 = true;
  a.pdl = pdl;
  std::string why;
  EXPECT_TRUE(cuda::quant::gemv_bulk_supports(a, why)) << why;
  EXPECT_EQ(cuda::quant::launch_gemv_bulk(a, st), TC_SUCCESS) << tc_last_error_message();
  std::vector<float> got(ny);
  EXPECT_EQ(cudaMemcpyAsync(got.data(), y.p, ny * 4, cudaMemcpyDeviceToHost, st), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  return got;
}

// The bulk GEMV on X of type xt at `x` gives the bits of the f32 launch on `xf` (the same values
// widened or dequantized to f32) and is within `bound` of float64 (`ref`): on the default path
// and with X by halves over 2-CTA clusters at every K (M = 1), PDL off and on; `what` names the
// case in the messages (test_quant_cuda_bulk_xhalf.cpp, _xq8.cpp).
inline void expect_bulk_bits_of_f32(const LaunchCase& c, const DevMem& w, const void* x,
                                    tc_dtype_t xt, const void* xf, const std::vector<double>& ref,
                                    double bound, const std::string& what, const DevMem& y,
                                    cudaStream_t st) {
  const char* xcl[][2] = {{"", ""}, {"2", "0"}};
  for (const auto& k : xcl) {
    if (*k[0] && c.M != 1) continue;
    set_knob("TC_QUANT_BULK_XCL", k[0]);
    set_knob("TC_QUANT_BULK_XCL_K", k[1]);
    for (const bool pdl : {false, true}) {
      const std::string at = what + " w=" + std::to_string(c.w) + " M=" + std::to_string(c.M) +
                             " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K) +
                             " xcl=" + k[0] + " pdl=" + std::to_string(pdl);
      const std::vector<float> want = run_bulk(c, w, xf, TC_DTYPE_F32, y, pdl, st);
      const std::vector<float> got = run_bulk(c, w, x, xt, y, pdl, st);
      EXPECT_TRUE(same_bits(got, want)) << at;
      EXPECT_LE(rms_scaled(got, ref), bound) << at;
    }
  }
  set_knob("TC_QUANT_BULK_XCL", "");
  set_knob("TC_QUANT_BULK_XCL_K", "");
}

// Kernel nodes of the graph captured from `queue` on `cs`; -1 on a capture failure.
template <class Queue>
int kernel_nodes(cudaStream_t cs, Queue queue) {
  cudaGraph_t g = nullptr;
  if (cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return -1;
  const bool ok = queue();
  if (cudaStreamEndCapture(cs, &g) != cudaSuccess || !ok) {
    if (g) cudaGraphDestroy(g);
    return -1;
  }
  size_t n = 0;
  cudaGraphGetNodes(g, nullptr, &n);
  std::vector<cudaGraphNode_t> nodes(n);
  cudaGraphGetNodes(g, nodes.data(), &n);
  int kernels = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    if (cudaGraphNodeGetType(node, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel)
      ++kernels;
  }
  cudaGraphDestroy(g);
  return kernels;
}

// Kernel nodes of one queued public call on `d` (W without scales, X into Y on stream `st`; the
// GEMV entry point at M <= 8, the GEMM one above): queued once outside a capture first (that
// sizes the stream's workspace), then captured; -1 on a failure.
inline int call_kernel_nodes(tc_context_t* ctx, const tc_quant_matmul_desc& d, tc_buffer_t* W,
                             tc_buffer_t* X, tc_buffer_t* Y, tc_stream_t* st) {
  const auto fn = d.M <= 8 ? tc_gemv_quantized_async : tc_gemm_quantized_async;
  const auto call = [&] { return fn(ctx, &d, W, nullptr, X, Y, st) == TC_SUCCESS; };
  if (!call() || tc_stream_sync(st) != TC_SUCCESS) return -1;
  return kernel_nodes(static_cast<cudaStream_t>(tc_stream_native_handle(st)), call);
}

}  // namespace tc::quant_test
