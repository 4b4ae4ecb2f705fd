// Every validation path of the GEMM entry points: a distinct status, a message that names the
// argument and its value, and C left untouched.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "common/backends.h"

namespace tc::test {
namespace {

class Validation : public ::testing::TestWithParam<tc_device_t> {
 protected:
  void SetUp() override {
    TC_CONTEXT_OR_SKIP(g_, GetParam());
    ASSERT_EQ(tc_buffer_alloc(g_.ctx, 4096, &a_), TC_SUCCESS);
    ASSERT_EQ(tc_buffer_alloc(g_.ctx, 4096, &b_), TC_SUCCESS);
    ASSERT_EQ(tc_buffer_alloc(g_.ctx, 4096, &c_), TC_SUCCESS);
    std::vector<uint8_t> fill(4096, 0xA5);
    tc_buffer_write(c_, 0, fill.data(), fill.size());
  }
  void TearDown() override {
    for (auto* b : {a_, b_, c_})
      if (b) tc_buffer_free(b);
  }
  static tc_gemm_desc base() {  // 8x8x8 f32: 256 bytes per operand
    return tc_gemm_desc{
        8, 8, 8, TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32, false, false, 1.0f, 0.0f,
        0, 0, 0};
  }
  // Expects `st` with a message containing every word of `needles`, and C unchanged.
  void expect(tc_status_t got, tc_status_t want, std::vector<std::string> needles) {
    EXPECT_EQ(got, want) << tc_status_string(got) << ": " << tc_last_error_message();
    std::string msg = tc_last_error_message();
    for (auto& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
    std::vector<uint8_t> now(4096);
    tc_buffer_read(c_, 0, now.data(), now.size());
    for (size_t i = 0; i < now.size(); ++i)
      if (now[i] != 0xA5) {
        ADD_FAILURE() << "C was written at byte " << i;
        break;
      }
  }
  tc_status_t gemm(const tc_gemm_desc& d) { return tc_gemm(g_.ctx, &d, a_, b_, c_); }

  ContextGuard g_;
  tc_buffer_t *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
};

TEST_P(Validation, NullPointers) {
  tc_gemm_desc d = base();
  expect(tc_gemm(nullptr, &d, a_, b_, c_), TC_ERROR_NULL_POINTER, {"ctx"});
  expect(tc_gemm(g_.ctx, nullptr, a_, b_, c_), TC_ERROR_NULL_POINTER, {"desc"});
  expect(tc_gemm(g_.ctx, &d, nullptr, b_, c_), TC_ERROR_NULL_POINTER, {"A"});
  expect(tc_gemm(g_.ctx, &d, a_, nullptr, c_), TC_ERROR_NULL_POINTER, {"B"});
  expect(tc_gemm(g_.ctx, &d, a_, b_, nullptr), TC_ERROR_NULL_POINTER, {"C"});
  expect(tc_gemm_async(g_.ctx, &d, a_, b_, c_, nullptr), TC_ERROR_NULL_POINTER, {"stream"});
  expect(tc_gemm_batched(g_.ctx, nullptr, a_, b_, c_), TC_ERROR_NULL_POINTER, {"desc"});
  tc_gemm_batched_desc bd{d, 2, 0, 0, 64};
  expect(tc_gemm_batched_async(g_.ctx, &bd, a_, b_, c_, nullptr), TC_ERROR_NULL_POINTER,
         {"stream"});
}

TEST_P(Validation, Shapes) {
  for (int v : {0, -3}) {
    tc_gemm_desc d = base();
    d.M = v;
    expect(gemm(d), TC_ERROR_INVALID_SHAPE, {"M", std::to_string(v)});
    d = base();
    d.N = v;
    expect(gemm(d), TC_ERROR_INVALID_SHAPE, {"N", std::to_string(v)});
    d = base();
    d.K = v;
    expect(gemm(d), TC_ERROR_INVALID_SHAPE, {"K", std::to_string(v)});
  }
  tc_gemm_desc d = base();
  d.M = 1 << 20, d.K = 1 << 12;  // A spans 2^32 elements
  expect(gemm(d), TC_ERROR_INVALID_SHAPE, {"32-bit"});
  tc_gemm_batched_desc bd{base(), 0, 0, 0, 0};
  expect(tc_gemm_batched(g_.ctx, &bd, a_, b_, c_), TC_ERROR_INVALID_SHAPE, {"batch", "0"});
}

TEST_P(Validation, LeadingDimensions) {
  tc_gemm_desc d = base();
  d.lda = 7;
  expect(gemm(d), TC_ERROR_INVALID_LD, {"lda", "7"});
  d = base();
  d.ldb = -1;
  expect(gemm(d), TC_ERROR_INVALID_LD, {"ldb", "-1"});
  d = base();
  d.ldc = 5;
  expect(gemm(d), TC_ERROR_INVALID_LD, {"ldc", "5"});
  d = base();
  d.M = 3, d.K = 9, d.transpose_a = true, d.lda = 2;  // stored 9 x 3: lda must be >= 3
  expect(gemm(d), TC_ERROR_INVALID_LD, {"lda", "2"});
}

TEST_P(Validation, BufferTooSmall) {
  tc_gemm_desc d = base();
  d.M = 40, d.K = 40;  // A needs 6400 bytes
  expect(gemm(d), TC_ERROR_BUFFER_TOO_SMALL, {"A", "4096", "6400"});
  d = base();
  d.ldb = 200;  // B reaches 7*200+8 elements
  expect(gemm(d), TC_ERROR_BUFFER_TOO_SMALL, {"B", "5632"});
  d = base();
  d.N = 200, d.ldb = 200;
  d.K = 2;  // B fits (1600 B), C needs 8 x 200 x 4 = 6400
  expect(gemm(d), TC_ERROR_BUFFER_TOO_SMALL, {"C", "6400"});
  tc_gemm_batched_desc bd{base(), 20, 64, 0, 64};  // A reaches (19*64+64)*4 = 5120
  expect(tc_gemm_batched(g_.ctx, &bd, a_, b_, c_), TC_ERROR_BUFFER_TOO_SMALL, {"A", "5120"});
}

TEST_P(Validation, Dtypes) {
  tc_gemm_desc d = base();
  d.a_dtype = TC_DTYPE_F16;
  expect(gemm(d), TC_ERROR_UNSUPPORTED_DTYPE, {"a_dtype", "f16", "b_dtype", "f32"});
  d = base();
  d.c_dtype = TC_DTYPE_I8;
  expect(gemm(d), TC_ERROR_UNSUPPORTED_DTYPE, {"c=i8"});
  d = base();
  d.a_dtype = d.b_dtype = TC_DTYPE_I8, d.c_dtype = TC_DTYPE_F32;
  expect(gemm(d), TC_ERROR_UNSUPPORTED_DTYPE, {"c=f32", "i32"});
  d.c_dtype = d.accum_dtype = TC_DTYPE_I32, d.alpha = 2.0f;
  expect(gemm(d), TC_ERROR_INVALID_VALUE, {"alpha", "2"});
  d = base();
  d.a_dtype = d.b_dtype = TC_DTYPE_Q4_0;
  expect(gemm(d), TC_ERROR_UNSUPPORTED_DTYPE, {"q4_0", "tc_gemm_quantized"});
  d = base();
  d.accum_dtype = static_cast<tc_dtype_t>(77);
  expect(gemm(d), TC_ERROR_INVALID_VALUE, {"accum_dtype", "77"});
}

TEST_P(Validation, OtherContext) {
  ContextGuard other;
  ASSERT_EQ(tc_context_create(&other.ctx, TC_DEVICE_CPU), TC_SUCCESS);
  tc_buffer_t* foreign = nullptr;
  ASSERT_EQ(tc_buffer_alloc(other.ctx, 4096, &foreign), TC_SUCCESS);
  tc_gemm_desc d = base();
  expect(tc_gemm(g_.ctx, &d, a_, foreign, c_), TC_ERROR_CONTEXT_MISMATCH, {"B", "another context"});
  tc_stream_t* s = nullptr;
  ASSERT_EQ(tc_stream_create(other.ctx, &s), TC_SUCCESS);
  expect(tc_gemm_async(g_.ctx, &d, a_, b_, c_, s), TC_ERROR_CONTEXT_MISMATCH, {"stream"});
  tc_stream_destroy(s);
  tc_buffer_free(foreign);
}

TEST_P(Validation, BatchedOverlapAndStrides) {
  tc_gemm_batched_desc bd{base(), 2, 64, 64, 32};  // C entries of 64 elements, 32 apart
  expect(tc_gemm_batched(g_.ctx, &bd, a_, b_, c_), TC_ERROR_OVERLAP, {"stride_c", "32"});
  bd.stride_c = 0;
  expect(tc_gemm_batched(g_.ctx, &bd, a_, b_, c_), TC_ERROR_OVERLAP, {"stride_c", "0"});
  bd.stride_c = -64;
  expect(tc_gemm_batched(g_.ctx, &bd, a_, b_, c_), TC_ERROR_INVALID_VALUE, {"stride_c", "-64"});
  // Interleaved rows (stride 8 inside ldc 16) do not overlap and are accepted.
  bd.stride_c = 8;
  bd.base.ldc = 16;
  EXPECT_EQ(tc_gemm_batched(g_.ctx, &bd, a_, b_, c_), TC_SUCCESS) << tc_last_error_message();
}

TEST_P(Validation, BufferCalls) {
  tc_buffer_t* b = nullptr;
  EXPECT_EQ(tc_buffer_alloc(g_.ctx, 0, &b), TC_ERROR_INVALID_VALUE);
  EXPECT_EQ(tc_buffer_alloc(g_.ctx, 16, nullptr), TC_ERROR_NULL_POINTER);
  char tmp[16] = {};
  EXPECT_EQ(tc_buffer_write(a_, 4090, tmp, 16), TC_ERROR_OUT_OF_RANGE);
  EXPECT_NE(std::string(tc_last_error_message()).find("4090"), std::string::npos);
  EXPECT_EQ(tc_buffer_read(a_, SIZE_MAX, tmp, 2), TC_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(tc_buffer_read(a_, 0, nullptr, 2), TC_ERROR_NULL_POINTER);
  EXPECT_EQ(tc_context_create(nullptr, TC_DEVICE_CPU), TC_ERROR_NULL_POINTER);
  tc_context_t* c = nullptr;
  EXPECT_EQ(tc_context_create(&c, static_cast<tc_device_t>(9)), TC_ERROR_INVALID_VALUE);
  EXPECT_EQ(tc_context_destroy(g_.ctx), TC_ERROR_INVALID_VALUE) << "live buffers must block it";
}

INSTANTIATE_TEST_SUITE_P(AllDevices, Validation, ::testing::ValuesIn(all_devices()),
                         [](const auto& info) { return device_name(info.param); });

TEST(Status, DistinctStrings) {
  std::set<std::string> seen;
  for (int s = 0; s <= TC_ERROR_INTERNAL; ++s)
    EXPECT_TRUE(seen.insert(tc_status_string(static_cast<tc_status_t>(s))).second) << s;
}

}  // namespace
}  // namespace tc::test
