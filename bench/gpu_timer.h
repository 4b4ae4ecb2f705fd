// Device-side helpers of the CUDA benchmark: random fills without host traffic (gpu_fill.cu)
// and CUDA-event timing (gpu_timer.cpp).
#pragma once

#include <cuda_runtime_api.h>
#include <tc/tc.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace tc::bench {

// Fills `count` elements of dtype `t` at `p` with values from U(-1, 1) (i8: U[-128, 127]),
// a hash of (seed, index): reproducible and never all zeros.
cudaError_t fill_random(void* p, tc_dtype_t t, size_t count, uint64_t seed, cudaStream_t s);

// Median milliseconds of one call of `launch(i)` on `stream` (i counts calls, for rotating
// inputs): a warm-up call, an estimate, then at least 5 batches of calls ~2 ms long, until
// `min_seconds` of GPU time was measured. Returns -1 when a launch fails.
double median_ms(cudaStream_t stream, const std::function<bool(int)>& launch, double min_seconds);

// Host microseconds to queue one `launch(i)`: a burst of calls timed with the wall clock after
// the stream drained (the GPU queue absorbs them), then the stream is drained again. -1 when a
// launch fails.
double host_us_per_call(cudaStream_t stream, const std::function<bool(int)>& launch);

}  // namespace tc::bench
