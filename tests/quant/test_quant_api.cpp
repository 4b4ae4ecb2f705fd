// Validation of the quantized entry points: each bad argument gets its own status and a
// message naming it and its value, and nothing is written.
#include <gtest/gtest.h>

#include <string>

#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

void expect_message(const char* needle) {
  EXPECT_NE(std::string(tc_last_error_message()).find(needle), std::string::npos)
      << "message '" << tc_last_error_message() << "' lacks '" << needle << "'";
}

struct Fixture : ::testing::Test {
  void SetUp() override {
    ASSERT_EQ(tc_context_create(&ctx.ctx, TC_DEVICE_CPU), TC_SUCCESS);
    ASSERT_EQ(tc_context_create(&other.ctx, TC_DEVICE_CPU), TC_SUCCESS);
    ASSERT_EQ(tc_buffer_alloc(ctx.ctx, 4 * 18, &W), TC_SUCCESS);  // N=4 rows of one Q4_0 block
    ASSERT_EQ(tc_buffer_alloc(ctx.ctx, 2 * 32 * 4, &X), TC_SUCCESS);
    ASSERT_EQ(tc_buffer_alloc(ctx.ctx, 2 * 4 * 4, &Y), TC_SUCCESS);
    ASSERT_EQ(tc_buffer_alloc(ctx.ctx, 16, &S), TC_SUCCESS);
    ASSERT_EQ(tc_buffer_alloc(other.ctx, 4 * 18, &W_other), TC_SUCCESS);
    const std::vector<uint8_t> w(4 * 18, 0x33);
    tc_buffer_write(W, 0, w.data(), w.size());
    const std::vector<float> y(8, 123.0f);
    tc_buffer_write(Y, 0, y.data(), 32);
  }
  void TearDown() override {
    for (tc_buffer_t* b : {W, X, Y, S, W_other}) {
      if (b) tc_buffer_free(b);
    }
  }
  void expect_y_untouched() {
    float y[8];
    tc_buffer_read(Y, 0, y, sizeof y);
    for (float v : y) EXPECT_EQ(v, 123.0f);
  }
  Context ctx, other;
  tc_buffer_t *W = nullptr, *X = nullptr, *Y = nullptr, *S = nullptr, *W_other = nullptr;
  tc_quant_matmul_desc d{2, 4, 32, TC_DTYPE_Q4_0, TC_DTYPE_F32, TC_DTYPE_F32, false, 0.0f};
};

TEST_F(Fixture, ValidCallRuns) {
  ASSERT_EQ(tc_gemv_quantized(ctx.ctx, &d, W, nullptr, X, Y), TC_SUCCESS)
      << tc_last_error_message();
  EXPECT_NE(std::string(tc_last_instance()), "");
}

TEST_F(Fixture, EachBadArgumentHasItsStatus) {
  EXPECT_EQ(tc_gemv_quantized(nullptr, &d, W, nullptr, X, Y), TC_ERROR_NULL_POINTER);
  expect_message("ctx");
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, nullptr, W, nullptr, X, Y), TC_ERROR_NULL_POINTER);
  expect_message("desc");
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &d, nullptr, nullptr, X, Y), TC_ERROR_NULL_POINTER);
  expect_message("W is NULL");
  EXPECT_EQ(tc_gemm_quantized(ctx.ctx, &d, W, nullptr, X, nullptr), TC_ERROR_NULL_POINTER);
  expect_message("Y is NULL");

  auto bad = d;
  bad.M = 0;
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &bad, W, nullptr, X, Y), TC_ERROR_INVALID_SHAPE);
  expect_message("M, N, K = 0, 4, 32");
  bad = d;
  bad.K = 48;
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &bad, W, nullptr, X, Y), TC_ERROR_INVALID_SHAPE);
  expect_message("K = 48 is not a multiple of the q4_0 block size 32");
  bad = d;
  bad.w_dtype = TC_DTYPE_F16;
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &bad, W, nullptr, X, Y), TC_ERROR_UNSUPPORTED_DTYPE);
  expect_message("w_dtype = 1 (f16)");
  bad = d;
  bad.x_dtype = TC_DTYPE_I8;
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &bad, W, nullptr, X, Y), TC_ERROR_UNSUPPORTED_DTYPE);
  expect_message("x_dtype = 3 (i8)");
  bad = d;
  bad.y_dtype = TC_DTYPE_BF16;
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &bad, W, nullptr, X, Y), TC_ERROR_UNSUPPORTED_DTYPE);
  expect_message("y_dtype = 2 (bf16)");
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &d, W, S, X, Y), TC_ERROR_INVALID_VALUE);
  expect_message("w_scales must be NULL for q4_0");
  bad = d;
  bad.w_dtype = TC_DTYPE_I8;
  bad.K = 9;  // 4 x 9 int8 fit in W's 72 bytes
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &bad, W, nullptr, X, Y), TC_ERROR_NULL_POINTER);
  expect_message("w_scales is NULL");
  bad.x_dtype = TC_DTYPE_I8;
  bad.x_scale = std::nanf("");
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &bad, W, S, X, Y), TC_ERROR_INVALID_VALUE);
  expect_message("x_scale = nan");
  bad = d;
  bad.N = 5;
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &bad, W, nullptr, X, Y), TC_ERROR_BUFFER_TOO_SMALL);
  expect_message("W has 72 bytes but the descriptor needs 90");
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &d, W_other, nullptr, X, Y), TC_ERROR_CONTEXT_MISMATCH);
  expect_message("W belongs to another context");
  expect_y_untouched();
}

TEST(QuantHostApi, QuantizeDequantizeValidation) {
  std::vector<float> x(64, 0.5f);
  std::vector<uint8_t> y(36, 0xab);
  EXPECT_EQ(tc_quant_row_bytes(TC_DTYPE_Q4_K, 512), 288u);
  EXPECT_EQ(tc_quant_row_bytes(TC_DTYPE_Q6_K, 256), 210u);
  EXPECT_EQ(tc_quant_row_bytes(TC_DTYPE_Q8_0, 33), 0u);
  EXPECT_EQ(tc_quant_row_bytes(TC_DTYPE_F32, 32), 0u);
  EXPECT_EQ(tc_quantize(TC_DTYPE_Q6_K, x.data(), 1, 256, y.data(), y.size()),
            TC_ERROR_UNSUPPORTED_DTYPE);
  EXPECT_EQ(tc_quantize(TC_DTYPE_Q4_0, x.data(), 1, 48, y.data(), y.size()),
            TC_ERROR_INVALID_SHAPE);
  expect_message("k = 48");
  EXPECT_EQ(tc_quantize(TC_DTYPE_Q4_0, x.data(), 2, 64, y.data(), y.size()),
            TC_ERROR_BUFFER_TOO_SMALL);
  expect_message("y_bytes = 36 is smaller than the 72 bytes");
  EXPECT_EQ(tc_quantize(TC_DTYPE_Q4_0, nullptr, 1, 64, y.data(), y.size()), TC_ERROR_NULL_POINTER);
  for (uint8_t b : y) ASSERT_EQ(b, 0xab);  // nothing written by the failed calls
  ASSERT_EQ(tc_quantize(TC_DTYPE_Q4_0, x.data(), 1, 64, y.data(), y.size()), TC_SUCCESS);
  std::vector<float> back(64, -1.0f);
  EXPECT_EQ(tc_dequantize(TC_DTYPE_BF16, y.data(), y.size(), 1, 64, back.data()),
            TC_ERROR_UNSUPPORTED_DTYPE);
  EXPECT_EQ(tc_dequantize(TC_DTYPE_Q4_0, y.data(), 35, 1, 64, back.data()),
            TC_ERROR_BUFFER_TOO_SMALL);
  ASSERT_EQ(tc_dequantize(TC_DTYPE_Q4_0, y.data(), y.size(), 1, 64, back.data()), TC_SUCCESS);
  for (float v : back) EXPECT_EQ(v, 0.5f);  // the block max maps exactly
}

}  // namespace
}  // namespace tc::quant_test
