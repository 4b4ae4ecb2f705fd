// Every CUDA dispatch row, forced with TC_GEMM_ROW, against float64 on odd shapes, all
// transposes, alpha/beta over poisoned C, padded leading dimensions and strided/broadcast
// batches, with the foundation's bounds (f32 1e-6, f16 5e-3, bf16 3e-3, i8 exact; TF32 3e-3).
// A row that declines a case (the decode kernel for M > 32, wgmma off sm_90) is skipped for
// that case only; each row must serve at least one case of each dtype it claims. Then the
// bitwise repeatability of each row over three runs, split-K shapes included.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "common/backends.h"
#include "common/gemm_case.h"
#include "common/reference.h"
#include "cuda_test_util.h"

namespace tc::test {
namespace {

struct RowSpec {
  const char* prefix;
  tc_backend_t backend;
  std::vector<int> dtypes;             // indices into kDtypes the row claims
  const char* instance = nullptr;      // prefix of its instance names, when not `prefix`
  bool hopper_only = false;            // sm_90a kernels: skipped elsewhere
  const char* skinny_bulk = nullptr;   // TC_SKINNY_BULK while the row runs (nullptr: unset)
  const char* name = nullptr;          // test name, when not `prefix`
  const char* not_instance = nullptr;  // text its instance names must not contain
};

const GemmDtypes kDtypes[] = {
    {TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_F32},   {TC_DTYPE_F32, TC_DTYPE_F32, TC_DTYPE_TF32},
    {TC_DTYPE_F16, TC_DTYPE_F16, TC_DTYPE_F32},   {TC_DTYPE_F16, TC_DTYPE_F32, TC_DTYPE_F32},
    {TC_DTYPE_BF16, TC_DTYPE_BF16, TC_DTYPE_F32}, {TC_DTYPE_BF16, TC_DTYPE_F32, TC_DTYPE_F32},
    {TC_DTYPE_I8, TC_DTYPE_I32, TC_DTYPE_I32},
};

const RowSpec kRows[] = {
    {"gemm_cublaslt", TC_BACKEND_CUBLASLT, {0, 1, 2, 3, 4, 5, 6}},
    {"gemm_wgmma", TC_BACKEND_CUDA, {2, 3, 4, 5, 6}, nullptr, true},
    {"gemm_tf32x3", TC_BACKEND_CUDA, {0}, "gemm_wgmma_tf32x3", true},
    {"gemm_mma", TC_BACKEND_CUDA, {2, 3, 4, 5}},
    {"gemm_skinny", TC_BACKEND_CUDA, {2, 3, 4, 5}},
    // The decode family's two kernels forced: the shared-memory ring (sm_90+) and registers.
    {"gemm_skinny",
     TC_BACKEND_CUDA,
     {2, 3, 4, 5},
     "gemm_skinny_bulk",
     true,
     "1",
     "gemm_skinny_bulk"},
    {"gemm_skinny", TC_BACKEND_CUDA, {2, 3, 4, 5}, nullptr, false, "0", "gemm_skinny_regs", "bulk"},
    {"gemm_simt", TC_BACKEND_CUDA, {0}},  // exact f32 only: it declines TF32 (H200, 2026-11-29)
};

double tolerance(const GemmDtypes& t) {
  return t.accum == TC_DTYPE_TF32 ? 3e-3 : gemm_tolerance(t.in, t.out);
}

std::vector<GemmCase> cases() {
  std::vector<GemmCase> v;
  const int shapes[][3] = {{1, 1, 1},      {7, 13, 5},    {97, 89, 101}, {128, 256, 192},
                           {1, 257, 128},  {16, 300, 72}, {5, 1000, 64}, {127, 131, 67},
                           {64, 64, 1536}, {3, 4099, 33}};
  for (auto& s : shapes)
    for (int t = 0; t < 4; ++t) v.push_back({s[0], s[1], s[2], bool(t & 1), bool(t & 2)});
  for (int t = 0; t < 4; ++t) {
    v.push_back({53, 47, 59, bool(t & 1), bool(t & 2), 0.5f, -1.5f});
    v.push_back({53, 47, 59, bool(t & 1), bool(t & 2), -2.0f, 0.0f});
    v.push_back({37, 41, 43, bool(t & 1), bool(t & 2), 1.0f, 0.0f, 3});
    v.push_back({12, 41, 43, bool(t & 1), bool(t & 2), 0.75f, 0.25f, 16});
  }
  GemmCase b{23, 29, 31, false, true, 1.0f, 0.5f};
  b.batch = 3;
  v.push_back(b);
  b.broadcast_a = true;
  v.push_back(b);
  b.broadcast_a = false, b.broadcast_b = true, b.ta = true, b.beta = 0.0f, b.ld_pad = 5;
  v.push_back(b);
  // Decode shapes (M <= 32, B stored N x K): odd N with a tail tile, K not a multiple of the
  // ring kernel's stages (256 / 512 k), more tiles than SMs, padded lda/ldb/ldc (multiples of 8
  // keep the decode kernels eligible), alpha/beta; M = 33 is declined by them.
  v.push_back({24, 77, 136, false, true, 0.5f, -1.5f, 8});
  v.push_back({32, 2200, 1032, false, true});
  v.push_back({17, 301, 600, false, true, -2.0f, 0.0f, 16});
  v.push_back({9, 4099, 520, false, true, 1.0f, 0.5f, 16});
  v.push_back({33, 65, 64, false, true});
  GemmCase d{8, 96, 64, false, true};
  d.use_async = true;
  v.push_back(d);
  return v;
}

// Whether the forced row serves `c` (probing with a tiny call of the same shape would be the
// same work, so the real run is made and NOT_SUPPORTED means "declined").
class CudaRows : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  void SetUp() override { TC_CONTEXT_OR_SKIP(g_, TC_DEVICE_CUDA); }
  ContextGuard g_;
};

bool row_serves(tc_context_t* ctx, const GemmCase& c, const GemmDtypes& t) {
  tc_gemm_desc d{c.M, c.N, c.K, t.in, t.in, t.out, t.accum, c.ta, c.tb, c.alpha, c.beta, 0, 0, 0};
  const size_t es = tc_dtype_size(t.in), eo = tc_dtype_size(t.out);
  tc_buffer_t *a = nullptr, *b = nullptr, *cc = nullptr;
  tc_buffer_alloc(ctx, size_t(c.M) * c.K * es * 4 + 4096, &a);
  tc_buffer_alloc(ctx, size_t(c.K) * c.N * es * 4 + 4096, &b);
  tc_buffer_alloc(ctx, size_t(c.M) * c.N * eo * 4 + 4096, &cc);
  if (c.ld_pad) {
    d.lda = (c.ta ? c.M : c.K) + c.ld_pad;
    d.ldb = (c.tb ? c.K : c.N) + c.ld_pad;
    d.ldc = c.N + c.ld_pad;
  }
  tc_status_t st;
  if (c.batch > 1) {
    tc_gemm_batched_desc bd{d, c.batch, 0, 0, int64_t(c.M) * (c.N + c.ld_pad) + 5};
    st = tc_gemm_batched(ctx, &bd, a, b, cc);
  } else {
    st = tc_gemm(ctx, &d, a, b, cc);
  }
  for (auto* x : {a, b, cc}) tc_buffer_free(x);
  return st != TC_ERROR_NOT_SUPPORTED;
}

TEST_P(CudaRows, MatchFloat64) {
  const RowSpec& row = kRows[std::get<0>(GetParam())];
  const int di = std::get<1>(GetParam());
  const GemmDtypes t = kDtypes[di];
  const bool claimed = std::find(row.dtypes.begin(), row.dtypes.end(), di) != row.dtypes.end();
  ScopedEnv force("TC_GEMM_ROW", row.prefix);
  ScopedEnv bulk("TC_SKINNY_BULK", row.skinny_bulk);
  std::mt19937_64 rng(777 + di);
  int served = 0;
  for (GemmCase c : cases()) {
    if (t.in == TC_DTYPE_I8) c.alpha = 1.0f, c.beta = c.beta == 0.0f ? 0.0f : 1.0f;
    if (!row_serves(g_.ctx, c, t)) continue;
    ++served;
    const double err = run_gemm_case(g_.ctx, c, t, rng);
    EXPECT_GE(err, 0.0) << row.prefix << " " << describe(c, t);
    EXPECT_LE(err, tolerance(t)) << row.prefix << " " << describe(c, t) << " ran "
                                 << tc_last_instance();
    EXPECT_EQ(tc_last_backend(), row.backend) << describe(c, t);
    EXPECT_EQ(std::string(tc_last_instance()).rfind(row.instance ? row.instance : row.prefix, 0),
              0u)
        << "ran " << tc_last_instance() << " under TC_GEMM_ROW=" << row.prefix;
    if (row.not_instance) {
      EXPECT_EQ(std::string(tc_last_instance()).find(row.not_instance), std::string::npos)
          << "ran " << tc_last_instance() << " under TC_SKINNY_BULK=" << row.skinny_bulk;
    }
  }
  if (!claimed) {
    EXPECT_EQ(served, 0) << row.prefix << " served " << tc_dtype_name(t.in) << " cases it does "
                         << "not claim";
  } else if (served == 0) {
    tc_device_info info;
    tc_context_device_info(g_.ctx, &info);
    if (row.hopper_only && !(info.cc_major == 9 && info.cc_minor == 0))
      GTEST_SKIP() << row.prefix << " needs sm_90a";
    ADD_FAILURE() << row.prefix << " served no " << tc_dtype_name(t.in) << "->"
                  << tc_dtype_name(t.out) << " case (not built, or declines everything)";
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, CudaRows,
                         ::testing::Combine(::testing::Range(0, int(std::size(kRows))),
                                            ::testing::Range(0, int(std::size(kDtypes)))),
                         [](const auto& info) {
                           const GemmDtypes t = kDtypes[std::get<1>(info.param)];
                           const RowSpec& r = kRows[std::get<0>(info.param)];
                           return std::string(r.name ? r.name : r.prefix) + "_" +
                                  tc_dtype_name(t.in) + "_" + tc_dtype_name(t.out) +
                                  (t.accum == TC_DTYPE_TF32 ? "_tf32" : "");
                         });

// Three runs of the same call give the same bytes, for every row that serves the shape. The
// shapes include small-M x N problems with long K, where planners split K.
class CudaDeterminism : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { TC_CONTEXT_OR_SKIP(g_, TC_DEVICE_CUDA); }
  ContextGuard g_;
};

TEST_P(CudaDeterminism, BitwiseIdenticalOverRepeatedRuns) {
  const GemmDtypes t = kDtypes[GetParam()];
  const int shapes[][4] = {{128, 128, 8192, 1},
                           {512, 512, 512, 1},
                           {4, 2048, 1024, 1},
                           {257, 263, 1031, 1},
                           {64, 96, 2048, 4}};
  int compared = 0;
  for (auto& s : shapes) {
    const tc_gemm_desc d{s[0],
                         s[1],
                         s[2],
                         t.in,
                         t.in,
                         t.out,
                         t.accum,
                         false,
                         true,
                         1.0f,
                         t.in == TC_DTYPE_I8 ? 1.0f : 0.5f,
                         0,
                         0,
                         0};
    const GemmInputs in = make_inputs(d, s[3], 99);
    for (const char* prefix :
         {"", "gemm_cublaslt", "gemm_wgmma", "gemm_mma", "gemm_skinny", "gemm_simt"}) {
      ScopedEnv force("TC_GEMM_ROW", *prefix ? prefix : nullptr);
      RunResult r0 = run_gemm_bytes(g_.ctx, in);
      if (r0.status == TC_ERROR_NOT_SUPPORTED) continue;
      ASSERT_EQ(r0.status, TC_SUCCESS) << prefix << ": " << r0.message;
      for (int rep = 0; rep < 2; ++rep) {
        RunResult r = run_gemm_bytes(g_.ctx, in);
        ASSERT_EQ(r.status, TC_SUCCESS) << r.message;
        EXPECT_EQ(r.instance, r0.instance);
        EXPECT_TRUE(r.c == r0.c) << "run " << rep + 2 << " of " << r0.instance << " on " << s[0]
                                 << "x" << s[1] << "x" << s[2] << " batch " << s[3]
                                 << " differs from run 1";
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaDeterminism, ::testing::Range(0, int(std::size(kDtypes))),
                         [](const auto& info) {
                           const GemmDtypes t = kDtypes[info.param];
                           return std::string(tc_dtype_name(t.in)) + "_" + tc_dtype_name(t.out) +
                                  (t.accum == TC_DTYPE_TF32 ? "_tf32" : "");
                         });

}  // namespace
}  // namespace tc::test
