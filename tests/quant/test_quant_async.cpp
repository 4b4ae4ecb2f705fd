// tc_gemv_quantized_async / tc_gemm_quantized_async on a stream, on every device this machine
// has: queued calls give the synchronous calls' bits (same row), two calls in flight on one
// stream finish in order (the second writer of Y wins), and a refused call queues nothing; the
// C++ wrappers (tc.hpp) of both forms; f16, bf16 and Q8_0 activations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tc/tc.hpp>
#include <vector>

#include "core/dtype.h"
#include "quant_api_util.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

// A decode GEMV of each format, batches (on CUDA the f16 MMA with K split, the int8 MMA), a
// prefill-sized M, and int8 weights.
const Case kCases[] = {{TC_DTYPE_Q4_0, TC_DTYPE_F32, true, 1, 131, 1024},
                       {TC_DTYPE_Q8_0, TC_DTYPE_F32, false, 3, 37, 288},
                       {TC_DTYPE_Q4_K, TC_DTYPE_F32, true, 9, 131, 512},
                       {TC_DTYPE_Q8_0, TC_DTYPE_F32, true, 16, 131, 4096},
                       {TC_DTYPE_Q4_0, TC_DTYPE_F32, true, 32, 131, 14336},
                       {TC_DTYPE_Q4_0, TC_DTYPE_F32, true, 64, 131, 768},
                       {TC_DTYPE_I8, TC_DTYPE_I8, false, 2, 23, 1000}};

class QuantAsync : public OnDevice {};

TEST_P(QuantAsync, QueuedCallsMatchSynchronousOnesInOrder) {
  uint32_t seed = 5100;
  for (const Case& c : kCases) {
    const Weights wt = make_weights(c.w, c.N, c.K, seed++);
    const Activations a1 = make_activations(c.x, c.M, c.K, seed++);
    const Activations a2 = make_activations(c.x, c.M, c.K, seed++);
    const tc_quant_matmul_desc d{c.M, c.N, c.K, c.w, c.x, TC_DTYPE_F32, c.act8, a1.x_scale};
    const auto fn = c.M <= 8 ? tc_gemv_quantized : tc_gemm_quantized;
    const auto fn_async = c.M <= 8 ? tc_gemv_quantized_async : tc_gemm_quantized_async;
    std::vector<float> sync1, sync2;
    ASSERT_EQ(run_api(ctx.ctx, d, wt, a1, fn, &sync1), TC_SUCCESS) << tc_last_error_message();
    const std::string row = tc_last_instance();
    ASSERT_EQ(run_api(ctx.ctx, d, wt, a2, fn, &sync2), TC_SUCCESS) << tc_last_error_message();

    const size_t ny = size_t(c.M) * c.N;
    const std::vector<float> poison(ny, std::nanf(""));
    Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size());
    const std::vector<float> scales = wt.scales.empty() ? std::vector<float>{1.0f} : wt.scales;
    Buf S(ctx.ctx, scales.data(), scales.size() * 4);
    Buf X1(ctx.ctx, a1.data(), a1.bytes()), X2(ctx.ctx, a2.data(), a2.bytes());
    Buf Y(ctx.ctx, poison.data(), ny * 4), Y2(ctx.ctx, poison.data(), ny * 4);
    tc_buffer_t* s = c.w == TC_DTYPE_I8 ? S.b : nullptr;
    Stream st(ctx.ctx);
    // Y <- X1, Y2 <- X1, then Y <- X2 on the same stream: in order, Y ends as X2's result.
    ASSERT_EQ(fn_async(ctx.ctx, &d, W.b, s, X1.b, Y.b, st.s), TC_SUCCESS)
        << tc_last_error_message();
    EXPECT_EQ(std::string(tc_last_instance()), row);
    ASSERT_EQ(fn_async(ctx.ctx, &d, W.b, s, X1.b, Y2.b, st.s), TC_SUCCESS);
    ASSERT_EQ(fn_async(ctx.ctx, &d, W.b, s, X2.b, Y.b, st.s), TC_SUCCESS);
    ASSERT_EQ(tc_stream_sync(st.s), TC_SUCCESS) << tc_last_error_message();
    const std::vector<float> y = Y.floats(ny), y2 = Y2.floats(ny);
    EXPECT_TRUE(same_bits(y2, sync1)) << row << " M=" << c.M << " K=" << c.K;
    EXPECT_TRUE(same_bits(y, sync2)) << row << " M=" << c.M << " K=" << c.K;
    // And against float64, so that two equally wrong paths cannot pass.
    const double bound = c.act8 ? 5e-3 : 1e-4;
    EXPECT_LE(rms_scaled(y, reference(wt, a2, c.M, c.N, c.K)), bound) << row;
  }
}

TEST_P(QuantAsync, RefusedCallsQueueNothing) {
  Context other;
  ASSERT_EQ(tc_context_create(&other.ctx, TC_DEVICE_CPU), TC_SUCCESS);
  const Weights wt = make_weights(TC_DTYPE_Q4_0, 4, 64, 7);
  const Activations a = make_activations(TC_DTYPE_F32, 2, 64, 8);
  const std::vector<float> marks(8, 123.0f);
  Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size()), X(ctx.ctx, a.data(), a.bytes());
  Buf Y(ctx.ctx, marks.data(), marks.size() * 4);
  Stream st(ctx.ctx), foreign(other.ctx);
  tc_quant_matmul_desc d{2, 4, 64, TC_DTYPE_Q4_0, TC_DTYPE_F32, TC_DTYPE_F32, false, 0.0f};
  EXPECT_EQ(tc_gemv_quantized_async(ctx.ctx, &d, W.b, nullptr, X.b, Y.b, nullptr),
            TC_ERROR_NULL_POINTER);
  EXPECT_NE(std::string(tc_last_error_message()).find("stream"), std::string::npos)
      << tc_last_error_message();
  EXPECT_EQ(tc_gemm_quantized_async(ctx.ctx, &d, W.b, nullptr, X.b, Y.b, foreign.s),
            TC_ERROR_CONTEXT_MISMATCH);
  d.K = 48;  // not a multiple of the 32-weight block
  EXPECT_EQ(tc_gemv_quantized_async(ctx.ctx, &d, W.b, nullptr, X.b, Y.b, st.s),
            TC_ERROR_INVALID_SHAPE);
  EXPECT_NE(std::string(tc_last_error_message()).find("K = 48"), std::string::npos)
      << tc_last_error_message();
  ASSERT_EQ(tc_stream_sync(st.s), TC_SUCCESS);
  EXPECT_TRUE(same_bits(Y.floats(marks.size()), marks));
}

TEST_P(QuantAsync, CppWrappersMatchFloat64AndThrowOnBadArguments) {
  tc::Context cx(GetParam());
  const int M = 3, N = 131, K = 512;
  const Weights wt = make_weights(TC_DTYPE_Q4_K, N, K, 61);
  const Activations a = make_activations(TC_DTYPE_F32, M, K, 62);
  const std::vector<double> ref = reference(wt, a, M, N, K);
  tc::Buffer W = tc::Buffer::from<uint8_t>(cx, wt.bytes), X = tc::Buffer::from<float>(cx, a.f);
  const std::vector<float> poison(size_t(M) * N, std::nanf(""));
  tc::Buffer Y = tc::Buffer::from<float>(cx, poison), Y2 = tc::Buffer::from<float>(cx, poison);
  const tc_quant_matmul_desc d = tc::quant_desc(M, N, K, TC_DTYPE_Q4_K);
  tc::gemv_quantized(cx, d, W, X, Y);
  EXPECT_LE(rms_scaled(Y.to_vector<float>(), ref), 1e-4) << tc::last_instance();
  tc::Stream s(cx);
  s.gemm_quantized(tc::quant_desc(M, N, K, TC_DTYPE_Q4_K, true), W, X, Y2);
  s.sync();
  EXPECT_LE(rms_scaled(Y2.to_vector<float>(), ref), 5e-3) << tc::last_instance();
  try {
    s.gemv_quantized(tc::quant_desc(M, N, 500, TC_DTYPE_Q4_K), W, X, Y);
    ADD_FAILURE() << "no exception";
  } catch (const tc::Error& e) {
    EXPECT_EQ(e.status(), TC_ERROR_INVALID_SHAPE);
    EXPECT_NE(std::string(e.what()).find("K = 500"), std::string::npos) << e.what();
  }
}

// f16 and bf16 activations (X widened to f32 before the rows, or read as it is by the CUDA
// 8-bit-activation kernels that can), synchronous and queued, against float64 of the half
// values; an X buffer sized for the half X is enough, one byte less is refused.
TEST_P(QuantAsync, HalfActivationsMatchFloat64) {
  // (Case::x is replaced by each half type in turn.)
  const Case half_cases[] = {{TC_DTYPE_Q4_0, TC_DTYPE_F16, true, 1, 131, 1024},
                             {TC_DTYPE_Q4_K, TC_DTYPE_F16, true, 5, 67, 1024},
                             {TC_DTYPE_Q4_0, TC_DTYPE_F16, false, 3, 37, 288},
                             {TC_DTYPE_Q8_0, TC_DTYPE_F16, true, 9, 131, 4096},
                             {TC_DTYPE_Q4_K, TC_DTYPE_F16, false, 2, 19, 512},
                             {TC_DTYPE_Q4_K, TC_DTYPE_F16, true, 64, 131, 768},
                             {TC_DTYPE_I8, TC_DTYPE_F16, false, 5, 23, 1000}};
  uint32_t seed = 7300;
  for (const Case& c : half_cases) {
    for (const tc_dtype_t xt : {TC_DTYPE_F16, TC_DTYPE_BF16}) {
      const Weights wt = make_weights(c.w, c.N, c.K, seed++);
      const HalfX x = half_x(xt, c.M, c.K, seed++);  // the reference sees the rounded values
      const std::vector<uint16_t>& h = x.h;
      const std::vector<double> ref = reference(wt, x.widened, c.M, c.N, c.K);
      const tc_quant_matmul_desc d{c.M, c.N, c.K, c.w, xt, TC_DTYPE_F32, c.act8, 0.0f};
      const size_t ny = size_t(c.M) * c.N;
      const std::vector<float> poison(ny, std::nanf(""));
      const std::vector<float> scales = wt.scales.empty() ? std::vector<float>{1.0f} : wt.scales;
      Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size()),
          S(ctx.ctx, scales.data(), scales.size() * 4);
      Buf X(ctx.ctx, h.data(), h.size() * 2), Xs(ctx.ctx, h.size() * 2 - 1);
      Buf Y(ctx.ctx, poison.data(), ny * 4), Y2(ctx.ctx, poison.data(), ny * 4);
      tc_buffer_t* s = c.w == TC_DTYPE_I8 ? S.b : nullptr;
      const double bound = c.act8 ? 5e-3 : 1e-4;
      ASSERT_EQ(tc_gemm_quantized(ctx.ctx, &d, W.b, s, X.b, Y.b), TC_SUCCESS)
          << tc_last_error_message();
      const std::string row = tc_last_instance();
      EXPECT_LE(rms_scaled(Y.floats(ny), ref), bound)
          << row << " x=" << xt << " M=" << c.M << " K=" << c.K;
      Stream st(ctx.ctx);
      ASSERT_EQ(tc_gemv_quantized_async(ctx.ctx, &d, W.b, s, X.b, Y2.b, st.s), TC_SUCCESS)
          << tc_last_error_message();
      ASSERT_EQ(tc_stream_sync(st.s), TC_SUCCESS) << tc_last_error_message();
      EXPECT_TRUE(same_bits(Y2.floats(ny), Y.floats(ny))) << row << " x=" << xt << " M=" << c.M;
      EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &d, W.b, s, Xs.b, Y.b), TC_ERROR_BUFFER_TOO_SMALL);
    }
  }
}

// X given as Q8_0 blocks: served by the rows f32 X would get (8-bit-activation rows where
// quantize_activations allows them, which then dot the codes as they are where they read them,
// else X dequantized to f32 first), synchronous and queued with the same bits, against float64
// of the values the blocks stand for. Blocks from ggml's reference quantizer (a +-127 in each)
// give the bits of the f32 call on the dequantized X on every row; blocks drawn directly (other
// largest codes, -128) give float64 within the row's bound, to 1e-5 where the CUDA bulk GEMV
// reads the codes. A buffer one byte short and K not a multiple of 32 (int8 weights take any
// K) are refused, name the argument and write nothing.
TEST_P(QuantAsync, Q8ActivationsMatchFloat64) {
  const Case q8_cases[] = {{TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, true, 1, 131, 1024},
                           {TC_DTYPE_Q4_K, TC_DTYPE_Q8_0, true, 2, 67, 4096},
                           {TC_DTYPE_Q8_0, TC_DTYPE_Q8_0, false, 3, 37, 288},
                           {TC_DTYPE_Q4_K, TC_DTYPE_Q8_0, true, 5, 67, 1024},
                           {TC_DTYPE_Q4_0, TC_DTYPE_Q8_0, true, 16, 131, 2048},
                           {TC_DTYPE_Q4_K, TC_DTYPE_Q8_0, true, 64, 131, 768},
                           {TC_DTYPE_I8, TC_DTYPE_Q8_0, false, 2, 23, 992}};
  uint32_t seed = 7500;
  for (const Case& c : q8_cases) {
    for (const bool raw : {false, true}) {
      const Weights wt = make_weights(c.w, c.N, c.K, seed++);
      const Q8X x = raw ? q8_x_raw(c.M, c.K, seed++) : q8_x(c.M, c.K, seed++);
      const std::vector<double> ref = reference(wt, x.dequantized, c.M, c.N, c.K);
      tc_quant_matmul_desc d{c.M, c.N, c.K, c.w, TC_DTYPE_Q8_0, TC_DTYPE_F32, c.act8, 0.0f};
      const size_t ny = size_t(c.M) * c.N;
      const std::vector<float> poison(ny, std::nanf(""));
      const std::vector<float> scales = wt.scales.empty() ? std::vector<float>{1.0f} : wt.scales;
      Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size()),
          S(ctx.ctx, scales.data(), scales.size() * 4);
      Buf X(ctx.ctx, x.blocks.data(), x.blocks.size()), Xs(ctx.ctx, x.blocks.size() - 1);
      Buf XF(ctx.ctx, x.dequantized.data(), x.dequantized.bytes());
      Buf Y(ctx.ctx, poison.data(), ny * 4), Y2(ctx.ctx, poison.data(), ny * 4);
      Buf Y3(ctx.ctx, poison.data(), ny * 4);
      tc_buffer_t* s = c.w == TC_DTYPE_I8 ? S.b : nullptr;
      const std::string at = "w=" + std::to_string(c.w) + " M=" + std::to_string(c.M) +
                             " K=" + std::to_string(c.K) + " act8=" + std::to_string(c.act8) +
                             " raw=" + std::to_string(raw);
      ASSERT_EQ(tc_gemm_quantized(ctx.ctx, &d, W.b, s, X.b, Y.b), TC_SUCCESS)
          << tc_last_error_message();
      const std::string row = tc_last_instance();
      const std::vector<float> y = Y.floats(ny);
      EXPECT_LE(rms_scaled(y, ref), c.act8 ? 5e-3 : 1e-4) << row << " " << at;
      if (row.find("gemv_bulk") != std::string::npos) {  // the codes as they are: exact sums
        EXPECT_LE(rms_scaled(y, ref), 1e-5) << row << " " << at;
      }
      if (!raw) {  // the reference quantizer's blocks: requantized, the same codes and scales
        d.x_dtype = TC_DTYPE_F32;
        ASSERT_EQ(tc_gemm_quantized(ctx.ctx, &d, W.b, s, XF.b, Y3.b), TC_SUCCESS)
            << tc_last_error_message();
        d.x_dtype = TC_DTYPE_Q8_0;
        EXPECT_TRUE(same_bits(y, Y3.floats(ny))) << row << " " << at;
      }
      Stream st(ctx.ctx);
      ASSERT_EQ(tc_gemv_quantized_async(ctx.ctx, &d, W.b, s, X.b, Y2.b, st.s), TC_SUCCESS)
          << tc_last_error_message();
      ASSERT_EQ(tc_stream_sync(st.s), TC_SUCCESS) << tc_last_error_message();
      EXPECT_TRUE(same_bits(Y2.floats(ny), y)) << row << " " << at;
      Buf Yp(ctx.ctx, poison.data(), ny * 4);
      EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &d, W.b, s, Xs.b, Yp.b), TC_ERROR_BUFFER_TOO_SMALL);
      EXPECT_NE(std::string(tc_last_error_message()).find("X has"), std::string::npos)
          << tc_last_error_message();
      EXPECT_TRUE(same_bits(Yp.floats(ny), poison)) << at;
    }
  }
  // Int8 weights take K = 1000; Q8_0 X does not (nothing is written).
  const Weights wt = make_weights(TC_DTYPE_I8, 4, 1000, 7);
  const std::vector<float> marks(8, 123.0f);
  Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size()), S(ctx.ctx, wt.scales.data(), 16);
  Buf X(ctx.ctx, 4096), Y(ctx.ctx, marks.data(), marks.size() * 4);
  const tc_quant_matmul_desc d{2, 4, 1000, TC_DTYPE_I8, TC_DTYPE_Q8_0, TC_DTYPE_F32, false, 0.0f};
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &d, W.b, S.b, X.b, Y.b), TC_ERROR_INVALID_SHAPE);
  EXPECT_NE(std::string(tc_last_error_message()).find("K = 1000"), std::string::npos)
      << tc_last_error_message();
  EXPECT_TRUE(same_bits(Y.floats(marks.size()), marks));
}

INSTANTIATE_ON_DEVICES(QuantAsync);

}  // namespace
}  // namespace tc::quant_test
