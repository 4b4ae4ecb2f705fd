// 8-bit activations for the integer dot kernels: each f32 row of X is quantized once per call
// (M*K values, cheap next to the N*K weights) into the layout the kernels read. Rows are
// padded with zero blocks to a whole group of 8 blocks (256 values) so kernels never branch
// on the tail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace tc::cpu {

// Order of the codes inside each group of 8 blocks (256 values).
enum class ActLayout {
  // Block after block, each in element order (Q8_0 and Q4_K weights).
  natural,
  // Four pairs of 64 codes: pair i holds [block i 0..15, block i+4 0..15, block i 16..31,
  // block i+4 16..31]. Q4_0 loads blocks i and i+4 into the two 128-bit lanes of one register,
  // so its low nibbles (elements 0..15) and high nibbles (16..31) meet these halves.
  q4_0_pairs,
};

// The activations of one group of 8 blocks (256 values) of one row.
struct ActGroup {
  const int8_t* y;      // 256 codes in the layout's order
  const float* d;       // 8 block scales
  const int32_t* sum8;  // 8 times the sums of the blocks' codes (Q4_0's -8 offset)
  const float* dsum;    // 8 sums of the blocks' values, d * sum (Q4_K's mins)
};

// Cache-line aligned storage for the activation vectors: malloc's 16-byte alignment made half
// of the kernels' 32-byte code loads straddle two cache lines, which costs a second load slot
// on Zen 3 (2 vector loads per cycle, 1 when a load crosses 64 bytes).
template <class T>
struct LineAlloc {
  using value_type = T;
  LineAlloc() = default;
  template <class U>
  explicit LineAlloc(const LineAlloc<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) { ::operator delete (p, std::align_val_t{64}); }
  bool operator==(const LineAlloc&) const { return true; }
};
template <class T>
using LineVector = std::vector<T, LineAlloc<T>>;

// Per row m and block b (element order, whatever the layout of the codes): d, sum8 and dsum at
// [m*nbp + b]; the codes at qs[(m*nbp + b)*32].
struct ActQ8 {
  int64_t nbp = 0;  // 32-value blocks per row, padded to a multiple of 8
  LineVector<int8_t> qs;
  LineVector<float> d;
  LineVector<int32_t> sum8;
  LineVector<float> dsum;
  ActGroup group(int m, int64_t g) const {
    const int64_t b = m * nbp + 8 * g;
    return {&qs[b * 32], &d[b], &sum8[b], &dsum[b]};
  }
};

// d = max|x|/127 per 32 values, codes rounded to nearest even, in [-127, 127]. Requires AVX2.
void quantize_act_q8(const float* x, int M, int64_t K, ActLayout layout, ActQ8* a);

}  // namespace tc::cpu
