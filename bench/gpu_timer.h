// Device-side helpers of the CUDA benchmark: random fills without host traffic (gpu_fill.cu)
// and CUDA-event timing (gpu_timer.cpp).
#pragma once

#include <cuda_runtime_api.h>
#include <tc/tc.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace tc::bench {

// Fills `count` elements of dtype `t` at `p` with values from U(-1, 1) (i8: U[-128, 127]),
// a hash of (seed, index): reproducible and never all zeros.
cudaError_t fill_random(void* p, tc_dtype_t t, size_t count, uint64_t seed, cudaStream_t s);

using Launch = std::function<bool(int)>;

// Median milliseconds of one call of each `launches[j](i)` on `stream` (i counts that launch's
// calls, for rotating inputs): a warm-up call and an estimate of each, then batches of calls
// ~2 ms long in rotating order (a b, b a, ...: none always runs behind another's tail, and the
// GPU's drift weighs on all alike), at least 5 per launch and until each has `min_seconds` of
// GPU time (at most 200). Writes ms_out[j]; every one is -1 when a launch fails.
void alternating_median_ms(cudaStream_t stream, std::span<const Launch* const> launches,
                           double min_seconds, double* ms_out);
// The same for one launch.
double median_ms(cudaStream_t stream, const Launch& launch, double min_seconds);

// Captures what `queue` issues on `stream` into one CUDA graph and returns the median ms of a
// graph launch (median_ms), or -1.
double graph_ms(cudaStream_t stream, const std::function<bool()>& queue, double min_seconds);

// Host microseconds to queue one `launch(i)`: the median of 5 bursts of 40 calls, each timed
// with the wall clock after the stream drained (the GPU queue absorbs them; one burst of 200
// moved by up to 1.5x with the host's drift, H200 2026-11-30). -1 when a launch fails.
double host_us_per_call(cudaStream_t stream, const std::function<bool(int)>& launch);

}  // namespace tc::bench
