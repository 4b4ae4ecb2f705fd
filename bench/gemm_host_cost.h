// tc_gemm_host_cost: host microseconds per queued GEMM call (tc_gemm_async, tuned and on tc's
// own kernels, against cublasLtMatmul called directly) and the prices of the pieces such a call
// is made of (getenv, cudaGetDevice, TMA descriptor encoding, an empty kernel's launch). Issue
// 3's launch-bound cells (256^3..1024^3) run at the host's speed, so these decide them.
#pragma once

#include <cuda_runtime_api.h>

namespace tc::bench {

// host_cost_probe.cu: an empty kernel with the parameter size of tc's wgmma kernels, launched
// with cudaLaunchKernelEx (pdl: with programmatic stream serialization).
cudaError_t launch_empty_probe(cudaStream_t s, bool pdl);

}  // namespace tc::bench
