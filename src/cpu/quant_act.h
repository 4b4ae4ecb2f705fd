// 8-bit activations for the integer dot kernels: each f32 row of X is quantized once per call
// (K values, cheap next to the N*K weights) into the layout the kernels read. Buffers are
// padded with zero blocks to a whole group of 8 blocks so kernels never branch on the tail.
#pragma once

#include <cstdint>
#include <vector>

namespace tc::cpu {

// Per row m: qs[m*Kp .. ] int8 codes; d[m*nbp + b] f32 scale of 32-value block b;
// corr[m*nbp + b] = 8 * (sum of the block's codes), the Q4_0 offset term.
struct ActQ8_0 {
  int64_t nbp = 0;  // blocks per row, padded to a multiple of 8
  std::vector<int8_t> qs;
  std::vector<float> d;
  std::vector<int32_t> corr;
};
void quantize_act_q8_0(const float* x, int M, int64_t K, ActQ8_0* a);

}  // namespace tc::cpu
