// Device memory, cases and launcher arguments for the launcher-level quant CUDA tests
// (test_quant_cuda_graph.cpp, _launchers.cpp, _mma_f16.cpp), which call the kernels' launchers
// on their own streams.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "cuda/quant_kernels.h"
#include "quant_test_util.h"

namespace tc::quant_test {

// Sets the environment variable `name` to `v` ("" unsets it): the knob forms of the tests.
inline void set_knob(const char* name, const char* v) {
  if (*v)
    setenv(name, v, 1);
  else
    unsetenv(name);
}

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

}  // namespace tc::quant_test
