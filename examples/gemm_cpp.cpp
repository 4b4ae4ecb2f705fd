// The README's C++ example: a bf16 GEMM with f32 output, and a tc::Error on bad input.
#include <tc/tc.hpp>

#include <cstdio>
#include <vector>

int main() {
  tc::Context ctx;  // TC_DEVICE_AUTO: CUDA when present, else the CPU
  const int M = 64, N = 48, K = 80;
  std::vector<uint16_t> a(M * K, 0x3f80), b(K * N, 0x4000);  // bf16 1.0 and 2.0
  tc::Buffer A = tc::Buffer::from<uint16_t>(ctx, a), B = tc::Buffer::from<uint16_t>(ctx, b);
  tc::Buffer C(ctx, M * N * sizeof(float));
  tc::gemm(ctx, tc::gemm_desc(M, N, K, TC_DTYPE_BF16, TC_DTYPE_F32), A, B, C);
  std::vector<float> c = C.to_vector<float>();
  std::printf("C[0] = %g (expect %d) via %s\n", c[0], 2 * K, tc::last_instance().c_str());

  try {
    tc::gemm(ctx, tc::gemm_desc(M, N, -1), A, B, C);
  } catch (const tc::Error& e) {
    std::printf("rejected: %s\n", e.what());
    return c[0] == 2.0f * K && e.status() == TC_ERROR_INVALID_SHAPE ? 0 : 1;
  }
  return 1;
}
