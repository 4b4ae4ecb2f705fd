// Buffers and streams of the public API for the quantized-matmul tests that call it directly
// (test_quant_async.cpp, test_quant_flags.cpp; tests/quant_cuda/test_quant_cuda_api_graph.cpp).
#pragma once

#include <gtest/gtest.h>
#include <tc/tc.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "quant_test_util.h"

namespace tc::quant_test {

struct Buf {
  tc_buffer_t* b = nullptr;
  Buf(tc_context_t* ctx, size_t bytes) { EXPECT_EQ(tc_buffer_alloc(ctx, bytes, &b), TC_SUCCESS); }
  Buf(tc_context_t* ctx, const void* data, size_t bytes) : Buf(ctx, bytes) {
    if (b) {
      EXPECT_EQ(tc_buffer_write(b, 0, data, bytes), TC_SUCCESS);
    }
  }
  ~Buf() {
    if (b) tc_buffer_free(b);
  }
  std::vector<float> floats(size_t n) const {
    std::vector<float> v(n);
    EXPECT_EQ(tc_buffer_read(b, 0, v.data(), n * 4), TC_SUCCESS);
    return v;
  }
};

struct Stream {
  tc_stream_t* s = nullptr;
  explicit Stream(tc_context_t* ctx) { EXPECT_EQ(tc_stream_create(ctx, &s), TC_SUCCESS); }
  ~Stream() {
    if (s) tc_stream_destroy(s);
  }
};

// X rounded to `t` (f16 or bf16): the half bits, and the same values as f32 (for the reference
// and for the f32 call on the widened X).
struct HalfX {
  std::vector<uint16_t> h;
  Activations widened;
};
inline HalfX half_x(tc_dtype_t t, int M, int K, uint32_t seed) {
  HalfX x{{}, make_activations(TC_DTYPE_F32, M, K, seed)};
  // Uniform in [-1, 1) as make_activations gives them: a wider spread of magnitudes within a
  // 32-block costs the small values' 8-bit codes more than the 5e-3 bound allows, for f32 X too.
  std::vector<float>& f = x.widened.f;
  x.h.resize(f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    x.h[i] = t == TC_DTYPE_BF16 ? f32_to_bf16(f[i]) : f32_to_f16(f[i]);
    f[i] = t == TC_DTYPE_BF16 ? bf16_to_f32(x.h[i]) : f16_to_f32(x.h[i]);
  }
  return x;
}

// X given as Q8_0 blocks (x_dtype Q8_0): M rows of K / 32 GGUF block_q8_0 from random values by
// tc_quantize (ggml's reference quantizer, so each block holds a code of +-127), and the values
// they stand for (tc_dequantize) as f32, for the reference and for the f32 call.
struct Q8X {
  std::vector<uint8_t> blocks;
  Activations dequantized;
};
inline Q8X q8_x(int M, int K, uint32_t seed) {
  Q8X x{{}, make_activations(TC_DTYPE_F32, M, K, seed)};
  std::vector<float>& f = x.dequantized.f;
  x.blocks.resize(size_t(M) * tc_quant_row_bytes(TC_DTYPE_Q8_0, K));
  EXPECT_EQ(tc_quantize(TC_DTYPE_Q8_0, f.data(), M, K, x.blocks.data(), x.blocks.size()),
            TC_SUCCESS);
  EXPECT_EQ(tc_dequantize(TC_DTYPE_Q8_0, x.blocks.data(), x.blocks.size(), M, K, f.data()),
            TC_SUCCESS);
  return x;
}

// The same with codes drawn directly, as an RMSNorm that rounds otherwise could write them: each
// block's largest code is not +-127 (codes in [-100, 100], or any int8 with a -128 in the block),
// scales f16 in [0.004, 0.02).
inline Q8X q8_x_raw(int M, int K, uint32_t seed) {
  Q8X x{std::vector<uint8_t>(size_t(M) * tc_quant_row_bytes(TC_DTYPE_Q8_0, K)),
        make_activations(TC_DTYPE_F32, M, K, seed)};
  std::mt19937 rng(seed);
  for (size_t b = 0; b < x.blocks.size() / 34; ++b) {
    uint8_t* blk = x.blocks.data() + 34 * b;
    const uint16_t d = f32_to_f16(0.004f + 0.016f * float(rng() % 1000) / 1000.0f);
    std::memcpy(blk, &d, 2);
    const bool wide = b % 2 == 1;
    for (int i = 0; i < 32; ++i)
      blk[2 + i] = uint8_t(wide ? int(rng() % 256) - 128 : int(rng() % 201) - 100);
    if (wide) blk[2 + rng() % 32] = uint8_t(0x80);  // -128
  }
  std::vector<float>& f = x.dequantized.f;
  EXPECT_EQ(tc_dequantize(TC_DTYPE_Q8_0, x.blocks.data(), x.blocks.size(), M, K, f.data()),
            TC_SUCCESS);
  return x;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

// A case of the API tests: weight and activation dtypes, 8-bit activations allowed, shape.
struct Case {
  tc_dtype_t w, x;
  bool act8;
  int M, N, K;
};

// A test on each device (INSTANTIATE_ON_DEVICES), skipped where this machine has none, with a
// context of that device.
class OnDevice : public ::testing::TestWithParam<tc_device_t> {
 protected:
  void SetUp() override {
    if (!tc_device_available(GetParam()))
      GTEST_SKIP() << "no " << (GetParam() == TC_DEVICE_CUDA ? "CUDA" : "CPU") << " device";
    ASSERT_EQ(tc_context_create(&ctx.ctx, GetParam()), TC_SUCCESS) << tc_last_error_message();
  }
  Context ctx;
};

inline std::string device_name(const ::testing::TestParamInfo<tc_device_t>& info) {
  return info.param == TC_DEVICE_CUDA ? "cuda" : "cpu";
}

#define INSTANTIATE_ON_DEVICES(suite)                                                        \
  INSTANTIATE_TEST_SUITE_P(Devices, suite, ::testing::Values(TC_DEVICE_CPU, TC_DEVICE_CUDA), \
                           ::tc::quant_test::device_name)

}  // namespace tc::quant_test
