// Device memory for the launcher-level quant CUDA tests (test_quant_cuda_graph.cpp,
// test_quant_cuda_launchers.cpp), which call the kernels' launchers on their own streams.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "quant_test_util.h"

namespace tc::quant_test {

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

}  // namespace tc::quant_test
