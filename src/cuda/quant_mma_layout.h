// Integer maps of the quantized MMA kernel (quant_mma.cu), host- and device-callable so that
// tests/quant_cuda/test_quant_mma_layout.cpp checks them on the CPU.
//
// m16n8k16 with f16 operands (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point
// type"): lane = 4 gq + t holds
//   A (16x16, row): register i (0..3), half e: A[gq + 8 (i & 1)][2t + e + 8 (i >> 1)]
//   B (16x8, col):  register i (0..1), half e: B[2t + e + 8 i][gq]
//   C (16x8):       register i (0..3):         C[gq + 8 (i >> 1)][2t + (i & 1)]
// The k order inside a 32-element group is free as long as A and B agree: logical k of chunk
// ch (two k16 chunks per group) is the group's physical element group_element(ch, k). With
// it, a lane's four k of a chunk (2t, 2t+1, 2t+8, 2t+9) are 4 consecutive elements, i.e. one
// float4 of X and 4 consecutive bytes of Q8_0 / Q4_K nibbles, and Q4_0's chunk 1 (elements
// 16..31, the high nibbles) reads the very bytes of chunk 0.
#pragma once

#ifdef __CUDACC__
#define TC_HD __host__ __device__
#else
#define TC_HD
#endif

namespace tc::cuda::quant::mma_layout {

TC_HD constexpr int a_row(int lane, int i) {
  return lane / 4 + 8 * (i & 1);
}
TC_HD constexpr int a_col(int lane, int i, int e) {
  return 2 * (lane % 4) + e + 8 * (i >> 1);
}
TC_HD constexpr int b_row(int lane, int i, int e) {
  return 2 * (lane % 4) + e + 8 * i;
}
TC_HD constexpr int b_col(int lane) {
  return lane / 4;
}
TC_HD constexpr int c_row(int lane, int i) {
  return lane / 4 + 8 * (i >> 1);
}
TC_HD constexpr int c_col(int lane, int i) {
  return 2 * (lane % 4) + (i & 1);
}

// Physical element (0..31) of the group for logical k (0..15) of chunk ch (0..1).
TC_HD constexpr int group_element(int ch, int k) {
  return 16 * ch + 4 * ((k % 8) / 2) + 2 * (k / 8) + k % 2;
}
// First of the 4 consecutive elements a lane with quad index t uses in chunk ch.
TC_HD constexpr int lane_first_element(int ch, int t) {
  return group_element(ch, 2 * t);
}

// Where a lane finds the two weights of its B register h (0: k 2t, 2t+1; 1: k 2t+8, 2t+9) of
// chunk ch: the byte offset inside the block's quants (qs) of the first of two consecutive
// bytes, and the nibble shift (4-bit formats).
//   Q4_0: element p < 16 is the low nibble of qs[p], p >= 16 the high nibble of qs[p - 16].
//   Q8_0: element p is qs[p].
//   Q4_K: element p of sub-block j is nibble (j & 1) of the chunk's 32 bytes, byte p.
TC_HD constexpr int q4_0_byte(int ch, int t, int h) {
  return group_element(ch, 2 * t + 8 * h) % 16;
}
TC_HD constexpr int q4_0_shift(int ch) {
  return 4 * ch;
}
TC_HD constexpr int q8_byte(int ch, int t, int h) {  // Q8_0 qs, and Q4_K chunk bytes
  return group_element(ch, 2 * t + 8 * h);
}

}  // namespace tc::cuda::quant::mma_layout
