// Division by a run-time constant as a multiply-high and a shift, for device index math (the
// pack kernel finds each thread's row with it). No CUDA headers: the host tests check it
// against the / operator on machines without the toolkit.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TC_FASTDIV_HD __host__ __device__
#else
#define TC_FASTDIV_HD
#endif

namespace tc::cuda {

// n / d for n < 2^31 as a multiply-high and a shift (the round-up method: mul = ceil(2^p / d)
// with p = 31 + ceil(log2 d), exact for every n < 2^31).
struct FastDiv {
  uint32_t d = 1, mul = 0, shr = 0;
  FastDiv() = default;
  explicit FastDiv(uint32_t divisor) : d(divisor) {
    if (d <= 1) return;
    uint32_t log2 = 0;
    while ((uint64_t(1) << log2) < d) ++log2;
    const uint32_t p = 31 + log2;
    mul = uint32_t(((uint64_t(1) << p) + d - 1) / d);
    shr = p - 32;
  }
  TC_FASTDIV_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    return d == 1 ? n : __umulhi(n, mul) >> shr;
#else
    return d == 1 ? n : uint32_t((uint64_t(n) * mul) >> 32) >> shr;
#endif
  }
};

}  // namespace tc::cuda
