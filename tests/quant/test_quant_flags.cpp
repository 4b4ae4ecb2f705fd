// tc_quant_matmul_desc.flags on every device this machine has: a bit that no flag defines is
// refused with TC_ERROR_INVALID_VALUE and a message naming the value (nothing written, nothing
// queued); TC_QUANT_WEIGHTS_CONSTANT gives the bits of the call without it, synchronous and in a
// chain of queued calls (on CUDA: kernels launched with PDL back to back, f16 X too). Also the
// per-thread decision memo: a knob set between two identical calls is seen by the second.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <optional>
#include <string>
#include <tc/tc.hpp>
#include <vector>

#include "core/dtype.h"
#include "quant_api_util.h"
#include "quant_test_util.h"

namespace tc::quant_test {
namespace {

// Sets (or with nullptr unsets) an environment variable for a scope, then restores it.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~EnvVar() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class QuantFlags : public OnDevice {};

TEST_P(QuantFlags, UnknownBitsAreRefusedAndNothingIsWritten) {
  const int M = 2, N = 37, K = 256;
  const Weights wt = make_weights(TC_DTYPE_Q4_0, N, K, 8100);
  const Activations a = make_activations(TC_DTYPE_F32, M, K, 8101);
  const std::vector<float> marks(size_t(M) * N, 123.0f);
  Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size()), X(ctx.ctx, a.data(), a.bytes());
  Buf Y(ctx.ctx, marks.data(), marks.size() * 4);
  Stream st(ctx.ctx);
  tc_quant_matmul_desc d{M, N, K, TC_DTYPE_Q4_0, TC_DTYPE_F32, TC_DTYPE_F32, true, 0.0f};
  for (const uint32_t bad : {0x2u, 0x80000001u, 0xffffffffu}) {
    d.flags = bad;
    char hex[16];
    std::snprintf(hex, sizeof hex, "%#x", bad);
    const std::string want = std::string("flags = ") + hex;
    EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &d, W.b, nullptr, X.b, Y.b), TC_ERROR_INVALID_VALUE);
    EXPECT_NE(std::string(tc_last_error_message()).find(want), std::string::npos)
        << tc_last_error_message();
    EXPECT_EQ(tc_gemm_quantized(ctx.ctx, &d, W.b, nullptr, X.b, Y.b), TC_ERROR_INVALID_VALUE);
    EXPECT_EQ(tc_gemv_quantized_async(ctx.ctx, &d, W.b, nullptr, X.b, Y.b, st.s),
              TC_ERROR_INVALID_VALUE);
    EXPECT_NE(std::string(tc_last_error_message()).find(want), std::string::npos)
        << tc_last_error_message();
    EXPECT_EQ(tc_gemm_quantized_async(ctx.ctx, &d, W.b, nullptr, X.b, Y.b, st.s),
              TC_ERROR_INVALID_VALUE);
  }
  ASSERT_EQ(tc_stream_sync(st.s), TC_SUCCESS) << tc_last_error_message();
  EXPECT_TRUE(same_bits(Y.floats(marks.size()), marks));
  // The defined flag alone is accepted; the C++ helper carries it.
  d.flags = TC_QUANT_WEIGHTS_CONSTANT;
  EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &d, W.b, nullptr, X.b, Y.b), TC_SUCCESS)
      << tc_last_error_message();
  EXPECT_EQ(tc::quant_desc(M, N, K, TC_DTYPE_Q4_0, true, TC_QUANT_WEIGHTS_CONSTANT).flags,
            uint32_t(TC_QUANT_WEIGHTS_CONSTANT));
  tc::Context cx(GetParam());
  tc::Buffer W2 = tc::Buffer::from<uint8_t>(cx, wt.bytes), X2 = tc::Buffer::from<float>(cx, a.f);
  tc::Buffer Y2 = tc::Buffer::from<float>(cx, marks);
  try {
    tc::gemv_quantized(cx, tc::quant_desc(M, N, K, TC_DTYPE_Q4_0, true, 0x4u), W2, X2, Y2);
    ADD_FAILURE() << "no exception";
  } catch (const tc::Error& e) {
    EXPECT_EQ(e.status(), TC_ERROR_INVALID_VALUE);
  }
  EXPECT_TRUE(same_bits(Y2.to_vector<float>(), marks));
}

// The decode rows (on CUDA: the bulk GEMV, the f16 MMA, the int8 MMA, the f16 MMA with K split),
// a prefill-sized M, f16 X on the decode and batched rows, exact f32 activations.
const Case kCases[] = {{TC_DTYPE_Q4_0, TC_DTYPE_F32, true, 1, 131, 1024},
                       {TC_DTYPE_Q4_K, TC_DTYPE_F32, true, 5, 131, 512},
                       {TC_DTYPE_Q8_0, TC_DTYPE_F32, true, 24, 67, 1024},
                       {TC_DTYPE_Q4_0, TC_DTYPE_F32, true, 32, 131, 14336},
                       {TC_DTYPE_Q4_0, TC_DTYPE_F32, true, 64, 131, 768},
                       {TC_DTYPE_Q8_0, TC_DTYPE_F32, false, 3, 37, 288},
                       {TC_DTYPE_Q4_0, TC_DTYPE_F16, true, 1, 131, 1024},
                       {TC_DTYPE_Q4_K, TC_DTYPE_F16, true, 9, 131, 4096}};

// Activations of case c in its dtype (f16: the rounded values, bytes in h).
Activations inputs(const Case& c, uint32_t seed, std::vector<uint16_t>* h) {
  Activations a = make_activations(TC_DTYPE_F32, c.M, c.K, seed);
  if (c.x == TC_DTYPE_F16) {
    h->resize(a.f.size());
    for (size_t i = 0; i < h->size(); ++i) {
      (*h)[i] = tc::f32_to_f16(a.f[i]);
      a.f[i] = tc::f16_to_f32((*h)[i]);
    }
  }
  return a;
}

// Three calls queued back to back with the flag (Y1 <- X1, Y2 <- X2, Y1 <- X3 with the weights
// of another tensor in between, so each kernel may start while the previous one runs) give the
// bits of the synchronous calls without it.
TEST_P(QuantFlags, WeightsConstantGivesTheSameBits) {
  uint32_t seed = 8200;
  for (const Case& c : kCases) {
    const Weights wa = make_weights(c.w, c.N, c.K, seed++),
                  wb = make_weights(c.w, c.N, c.K, seed++);
    std::vector<uint16_t> h1, h2, h3;
    const Activations a1 = inputs(c, seed++, &h1), a2 = inputs(c, seed++, &h2),
                      a3 = inputs(c, seed++, &h3);
    const size_t xb = c.x == TC_DTYPE_F16 ? h1.size() * 2 : a1.bytes();
    auto xdata = [&](const Activations& a, const std::vector<uint16_t>& h) {
      return c.x == TC_DTYPE_F16 ? static_cast<const void*>(h.data()) : a.data();
    };
    const size_t ny = size_t(c.M) * c.N;
    const std::vector<float> poison(ny, std::nanf(""));
    Buf WA(ctx.ctx, wa.bytes.data(), wa.bytes.size()),
        WB(ctx.ctx, wb.bytes.data(), wb.bytes.size());
    Buf X1(ctx.ctx, xdata(a1, h1), xb), X2(ctx.ctx, xdata(a2, h2), xb),
        X3(ctx.ctx, xdata(a3, h3), xb);
    Buf Y1(ctx.ctx, poison.data(), ny * 4), Y2(ctx.ctx, poison.data(), ny * 4);
    Buf R1(ctx.ctx, poison.data(), ny * 4), R2(ctx.ctx, poison.data(), ny * 4);
    tc_quant_matmul_desc d{c.M, c.N, c.K, c.w, c.x, TC_DTYPE_F32, c.act8, 0.0f};
    const auto fn = c.M <= 8 ? tc_gemv_quantized : tc_gemm_quantized;
    const auto fn_async = c.M <= 8 ? tc_gemv_quantized_async : tc_gemm_quantized_async;
    ASSERT_EQ(fn(ctx.ctx, &d, WB.b, nullptr, X2.b, R2.b), TC_SUCCESS) << tc_last_error_message();
    ASSERT_EQ(fn(ctx.ctx, &d, WA.b, nullptr, X3.b, R1.b), TC_SUCCESS) << tc_last_error_message();
    const std::string row = tc_last_instance();
    d.flags = TC_QUANT_WEIGHTS_CONSTANT;
    Stream st(ctx.ctx);
    ASSERT_EQ(fn_async(ctx.ctx, &d, WA.b, nullptr, X1.b, Y1.b, st.s), TC_SUCCESS)
        << tc_last_error_message();
    EXPECT_EQ(std::string(tc_last_instance()), row);
    ASSERT_EQ(fn_async(ctx.ctx, &d, WB.b, nullptr, X2.b, Y2.b, st.s), TC_SUCCESS);
    ASSERT_EQ(fn_async(ctx.ctx, &d, WA.b, nullptr, X3.b, Y1.b, st.s), TC_SUCCESS);
    ASSERT_EQ(tc_stream_sync(st.s), TC_SUCCESS) << tc_last_error_message();
    const std::vector<float> y1 = Y1.floats(ny), y2 = Y2.floats(ny);
    EXPECT_TRUE(same_bits(y1, R1.floats(ny))) << row << " M=" << c.M << " K=" << c.K;
    EXPECT_TRUE(same_bits(y2, R2.floats(ny))) << row << " M=" << c.M << " K=" << c.K;
    // The synchronous call with the flag, and float64, so that two equally wrong paths fail.
    ASSERT_EQ(fn(ctx.ctx, &d, WB.b, nullptr, X2.b, Y2.b), TC_SUCCESS) << tc_last_error_message();
    EXPECT_TRUE(same_bits(Y2.floats(ny), R2.floats(ny))) << row << " M=" << c.M;
    const double bound = c.act8 ? 5e-3 : 1e-4;
    EXPECT_LE(rms_scaled(y1, reference(wa, a3, c.M, c.N, c.K)), bound) << row << " M=" << c.M;
  }
}

// The decision memo is keyed by the environment: TC_Q4_USE_V1 set between two identical calls
// changes the row of the second, and unsetting it changes it back.
TEST_P(QuantFlags, KnobSetBetweenIdenticalCallsIsSeen) {
  const EnvVar clear("TC_Q4_USE_V1", nullptr);
  const int M = 1, N = 67, K = 512;
  const Weights wt = make_weights(TC_DTYPE_Q4_0, N, K, 8300);
  const Activations a = make_activations(TC_DTYPE_F32, M, K, 8301);
  const std::vector<float> poison(size_t(M) * N, std::nanf(""));
  Buf W(ctx.ctx, wt.bytes.data(), wt.bytes.size()), X(ctx.ctx, a.data(), a.bytes());
  Buf Y(ctx.ctx, poison.data(), poison.size() * 4);
  const tc_quant_matmul_desc d{M, N, K, TC_DTYPE_Q4_0, TC_DTYPE_F32, TC_DTYPE_F32, true, 0.0f};
  auto row = [&] {
    EXPECT_EQ(tc_gemv_quantized(ctx.ctx, &d, W.b, nullptr, X.b, Y.b), TC_SUCCESS)
        << tc_last_error_message();
    return std::string(tc_last_instance());
  };
  const std::string first = row();
  EXPECT_EQ(row(), first);  // served by the memo
  const std::string v1 = GetParam() == TC_DEVICE_CUDA ? "cuda_quant_v1" : "gemv_quant_v1_scalar";
  {
    const EnvVar force("TC_Q4_USE_V1", "1");
    EXPECT_EQ(row(), v1);
  }
  EXPECT_EQ(row(), first);
  EXPECT_NE(first, v1);
}

INSTANTIATE_ON_DEVICES(QuantFlags);

}  // namespace
}  // namespace tc::quant_test
