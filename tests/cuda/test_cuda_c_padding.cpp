// C's row padding (ldc > N) and the gaps between batch entries stay untouched by the sm_90a
// kernels, for every output dtype, on ragged N whose row end is not 16-byte aligned while the
// pitch is (so the TMA-store epilogue is legal): TMA stores write whole 16-byte chunks, and the
// wgmma epilogue once wrote the chunk holding the row end into the padding (H200, 2026-11-29).
// Each case runs with the TMA-store epilogue (beta = 0), the register epilogue (beta != 0, and
// TC_WGMMA_EPILOGUE=direct), split-K (long K) and swapped operands (C written transposed),
// batched too; C starts NaN/poisoned everywhere, and the values inside are checked against
// float64. The 3xTF32 row (f32) shares the TMA-store epilogue and is checked the same way.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "common/backends.h"
#include "common/reference.h"
#include "cuda_test_util.h"

namespace tc::test {
namespace {

struct OutCase {
  const char* row;       // TC_GEMM_ROW
  const char* instance;  // expected prefix of tc_last_instance()
  tc_dtype_t in, out;
  bool batched;  // the row serves batches
};

const OutCase kOuts[] = {
    {"gemm_wgmma", "gemm_wgmma_f16", TC_DTYPE_F16, TC_DTYPE_F16, true},
    {"gemm_wgmma", "gemm_wgmma_bf16", TC_DTYPE_BF16, TC_DTYPE_BF16, true},
    {"gemm_wgmma", "gemm_wgmma_f16", TC_DTYPE_F16, TC_DTYPE_F32, true},
    {"gemm_wgmma", "gemm_wgmma_bf16", TC_DTYPE_BF16, TC_DTYPE_F32, true},
    {"gemm_wgmma", "gemm_wgmma_s8", TC_DTYPE_I8, TC_DTYPE_I32, true},
    {"gemm_tf32x3", "gemm_wgmma_tf32x3", TC_DTYPE_F32, TC_DTYPE_F32, false},
};

struct Shape {
  int32_t M, N, K, batch;
  bool ta, tb;
  float beta;
  const char* knob;  // "NAME=VALUE" for this case: TC_WGMMA_EPILOGUE, TC_USE_128_TILE, _SWAP
};

class CudaCPadding : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    TC_CONTEXT_OR_SKIP(g_, TC_DEVICE_CUDA);
    if (!context_is_sm90a(g_.ctx)) GTEST_SKIP() << "needs sm_90a";
  }
  void run(const OutCase& o, const Shape& s, std::mt19937_64& rng);
  ContextGuard g_;
};

// ldc: N plus the padding up to the next 16-byte pitch, plus one more chunk, so that the row end
// is ragged (N * esz not a multiple of 16) and the pitch is TMA-legal.
int64_t padded_ldc(int32_t N, size_t esz) {
  const int64_t per = 16 / int64_t(esz);
  return (N + per - 1) / per * per + per;
}

void CudaCPadding::run(const OutCase& o, const Shape& s, std::mt19937_64& rng) {
  const size_t eo = tc_dtype_size(o.out);
  tc_gemm_desc d{};
  d.M = s.M, d.N = s.N, d.K = s.K;
  d.a_dtype = d.b_dtype = o.in;
  d.c_dtype = o.out;
  d.accum_dtype = o.in == TC_DTYPE_I8 ? TC_DTYPE_I32 : TC_DTYPE_F32;
  d.transpose_a = s.ta, d.transpose_b = s.tb;
  d.alpha = o.in == TC_DTYPE_I8 ? 1.0f : 0.75f;
  d.beta = o.in == TC_DTYPE_I8 && s.beta != 0.0f ? 1.0f : s.beta;
  const int64_t a_rows = s.ta ? s.K : s.M, b_rows = s.tb ? s.N : s.K;
  d.lda = s.ta ? s.M : s.K;
  d.ldb = s.tb ? s.K : s.N;
  d.ldc = int32_t(padded_ldc(s.N, eo));
  // Batch entries one padded row apart (a 16-byte multiple: the TMA map stays legal).
  const int64_t sa = a_rows * d.lda, sb = b_rows * d.ldb, sc = int64_t(s.M + 1) * d.ldc;
  const int64_t guard = 64;  // poisoned elements after the last entry
  HostMatrix A = make_matrix(o.in, size_t(s.batch * sa)),
             B = make_matrix(o.in, size_t(s.batch * sb));
  HostMatrix C = make_matrix(o.out, size_t(s.batch * sc + guard));
  fill_random(A, rng);
  fill_random(B, rng);
  poison(C);
  if (s.beta != 0.0f) {  // random values inside the M x N blocks only; the rest stays poisoned
    HostMatrix r = make_matrix(o.out, C.size());
    fill_random(r, rng);
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t i = 0; i < s.M; ++i)
        for (int64_t j = 0; j < s.N; ++j) {
          const size_t e = size_t(b * sc + i * d.ldc + j);
          std::memcpy(&C.bytes[e * eo], &r.bytes[e * eo], eo);
        }
  }
  const HostMatrix before = C;

  tc_buffer_t *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(tc_buffer_alloc(g_.ctx, A.bytes.size(), &a), TC_SUCCESS);
  ASSERT_EQ(tc_buffer_alloc(g_.ctx, B.bytes.size(), &b), TC_SUCCESS);
  ASSERT_EQ(tc_buffer_alloc(g_.ctx, C.bytes.size(), &c), TC_SUCCESS);
  tc_buffer_write(a, 0, A.bytes.data(), A.bytes.size());
  tc_buffer_write(b, 0, B.bytes.data(), B.bytes.size());
  tc_buffer_write(c, 0, C.bytes.data(), C.bytes.size());
  const std::string what = std::string(o.row) + " " + tc_dtype_name(o.in) + "->" +
                           tc_dtype_name(o.out) + " " + std::to_string(s.M) + "x" +
                           std::to_string(s.N) + "x" + std::to_string(s.K) + " batch " +
                           std::to_string(s.batch) + (s.ta ? " T" : " N") + (s.tb ? "T" : "N") +
                           " ldc " + std::to_string(d.ldc) + " beta " + std::to_string(d.beta) +
                           (s.knob ? std::string(" ") + s.knob : "");
  tc_status_t st;
  {
    ScopedEnv row("TC_GEMM_ROW", o.row);
    // The knobs are cleared unless the case sets one of them.
    const std::string knob = s.knob ? s.knob : "";
    const std::string name = knob.substr(0, knob.find('='));
    const char* value = knob.empty() ? nullptr : knob.c_str() + name.size() + 1;
    ScopedEnv epi("TC_WGMMA_EPILOGUE", name == "TC_WGMMA_EPILOGUE" ? value : nullptr);
    ScopedEnv tile("TC_USE_128_TILE", name == "TC_USE_128_TILE" ? value : nullptr);
    ScopedEnv swap("TC_WGMMA_SWAP", name == "TC_WGMMA_SWAP" ? value : nullptr);
    const tc_gemm_batched_desc bd{d, s.batch, sa, sb, sc};
    st = s.batch > 1 ? tc_gemm_batched(g_.ctx, &bd, a, b, c) : tc_gemm(g_.ctx, &d, a, b, c);
  }
  const std::string instance = tc_last_instance();
  EXPECT_EQ(st, TC_SUCCESS) << what << ": " << tc_last_error_message();
  if (st == TC_SUCCESS) {
    EXPECT_EQ(instance.rfind(o.instance, 0), 0u) << what << " ran " << instance;
    if (s.knob && std::strcmp(s.knob, "TC_WGMMA_SWAP=1") == 0 && o.in != TC_DTYPE_F32) {
      EXPECT_NE(instance.find("swapab"), std::string::npos) << what << " ran " << instance;
    }
    // Long K on few tiles must take the split-K path (partials, then the reduce kernel).
    if (o.in != TC_DTYPE_F32 && s.K >= 4096) {
      EXPECT_NE(instance.find("splitk"), std::string::npos) << what << " ran " << instance;
    }
    tc_buffer_read(c, 0, C.bytes.data(), C.bytes.size());
    int64_t written = 0, first = -1;
    for (int64_t e = 0; e < int64_t(C.size()); ++e) {
      const int64_t bi = e / sc, in = e % sc, i = in / d.ldc, j = in % d.ldc;
      const bool inside = bi < s.batch && i < s.M && j < s.N;
      if (!inside && std::memcmp(&C.bytes[e * eo], &before.bytes[e * eo], eo) != 0) {
        if (first < 0) first = e;
        ++written;
      }
    }
    EXPECT_EQ(written, 0) << what << " (" << instance << ") wrote " << written
                          << " elements outside C, first: batch " << first / sc << " row "
                          << first % sc / d.ldc << " col " << first % sc % d.ldc;
    std::vector<double> ref;
    for (int64_t bi = 0; bi < s.batch; ++bi) {
      reference_gemm(d, A, size_t(bi * sa), B, size_t(bi * sb), before, size_t(bi * sc), ref);
      const double err = rms_scaled(C, size_t(bi * sc), s.M, s.N, d.ldc, ref);
      EXPECT_LE(err, gemm_tolerance(o.in, o.out)) << what << " (" << instance << ") batch " << bi;
    }
  }
  for (auto* x : {a, b, c}) tc_buffer_free(x);
}

TEST_P(CudaCPadding, RowPaddingAndBatchGapsUntouched) {
  const OutCase& o = kOuts[GetParam()];
  std::mt19937_64 rng(4242 + GetParam());
  // N = 201: the row end is ragged for every element size; 70 rows: a ragged 64-row tile too.
  // K = 72: one pass; K = 4100: split-K (few tiles, >= 32 k-blocks, also for int8's BK 128).
  const Shape shapes[] = {
      {70, 201, 72, 1, false, true, 0.0f, nullptr},  // TMA-store epilogue
      {70, 201, 72, 1, true, false, 0.0f, nullptr},  // other transposes, TMA store
      {70, 201, 72, 1, false, true, 0.5f, nullptr},  // register epilogue (reads C)
      {70, 201, 72, 1, false, true, 0.0f, "TC_WGMMA_EPILOGUE=direct"},  // registers, beta 0
      {37, 3, 72, 1, false, true, 0.0f, nullptr},       // row narrower than one chunk
      {70, 201, 4100, 1, false, true, 0.0f, nullptr},   // split-K, reduce kernel
      {70, 201, 4100, 1, false, true, 0.5f, nullptr},   // split-K with beta
      {70, 201, 72, 3, false, true, 0.0f, nullptr},     // batched, TMA store over 3-D map
      {70, 201, 4100, 2, false, true, 0.0f, nullptr},   // batched split-K
      {300, 1001, 136, 1, false, true, 0.0f, nullptr},  // several column tiles
      {300, 1001, 136, 1, true, true, 0.0f, "TC_USE_128_TILE=1"},  // 128 x 256: 4-8 boxes
      // Operands swapped (C^T = B^T A^T, written transposed by the register epilogue).
      {70, 201, 72, 1, false, true, 0.5f, "TC_WGMMA_SWAP=1"},
      {70, 201, 72, 3, true, false, 0.5f, "TC_WGMMA_SWAP=1"},
      {300, 1001, 136, 1, true, true, 0.5f, "TC_WGMMA_SWAP=1"},
  };
  for (const Shape& s : shapes) {
    if (s.batch > 1 && !o.batched) continue;
    run(o, s, rng);
  }
}

INSTANTIATE_TEST_SUITE_P(Outputs, CudaCPadding, ::testing::Range(0, int(std::size(kOuts))),
                         [](const auto& info) {
                           const OutCase& o = kOuts[info.param];
                           return std::string(tc_dtype_name(o.in)) + "_" + tc_dtype_name(o.out);
                         });

}  // namespace
}  // namespace tc::test
