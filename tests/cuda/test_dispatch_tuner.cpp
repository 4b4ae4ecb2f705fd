// The dispatch's decisions against fake rows and a fake timing device, without a GPU: this
// binary compiles the core's dispatch, autotune cache and validation itself (TC_HAVE_CUDA on, so
// the tuned path exists) with a table of its own. It checks what the GPU tests cannot see: that
// a repeated call asks no row's can_run again (the memo), which changes of the signature or the
// environment decide afresh, and how the tuner ranks scripted timings (near-ties re-timed in
// reverse order, an earlier candidate kept unless a later one is more than 1% faster, cuBLASLt's
// variant 0 kept unless another is more than 5% faster; autotune::choose, whose own test is
// test_autotune_choose.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/autotune.h"
#include "core/dispatch.h"
#include "core/internal.h"
#include "core/validate.h"

namespace tc {
namespace {

// This binary links no tc library, so it has its own scoped environment variable (value
// nullptr unsets) rather than cuda_test_util's.
class Env {
 public:
  Env(const char* name, const char* value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~Env() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

std::string temp_cache_path() {
  static int serial = 0;
  return (std::filesystem::temp_directory_path() /
          ("tc_dispatch_tuner_" + std::to_string(getpid()) + "_" + std::to_string(serial++) +
           ".json"))
      .string();
}

int g_can_run_calls = 0;
tc_status_t no_op(const GemmProblem&) {
  return TC_SUCCESS;
}
// "own" serves f16 only; "lib" (two variants) serves f16 and f32.
bool own_can_run(const GemmProblem& p, std::string& why) {
  ++g_can_run_calls;
  if (p.d.a_dtype == TC_DTYPE_F16) return true;
  why = "f16 only";
  return false;
}
bool lib_can_run(const GemmProblem&, std::string&) {
  ++g_can_run_calls;
  return true;
}

// The timing device: each candidate's successive timings come from a script (the last value
// repeats); every timing is logged as "row#variant".
class FakeGpu final : public DeviceImpl, public GemmTimer {
 public:
  tc_device_t kind() const override { return TC_DEVICE_CUDA; }
  void fill_info(tc_device_info*) const override {}
  bool host_visible() const override { return true; }
  tc_status_t alloc(size_t, void**) override { return TC_ERROR_NOT_SUPPORTED; }
  void release(void*) override {}
  tc_status_t upload(void*, const void*, size_t) override { return TC_SUCCESS; }
  tc_status_t download(void*, const void*, size_t) override { return TC_SUCCESS; }
  std::unique_ptr<StreamImpl> create_stream() override { return nullptr; }
  tc_status_t run_sync(const std::function<tc_status_t(void*)>& work) override {
    return work(nullptr);
  }
  const std::string& device_key() const override { return key_; }
  int gemm_variants(const GemmProblem&, const GemmRow& row) override {
    return std::string(row.name) == "lib" ? 2 : 1;
  }
  double time_gemm(const GemmProblem&, const GemmRow& row, int variant) override {
    const std::string id = std::string(row.name) + "#" + std::to_string(variant);
    timed.push_back(id);
    std::vector<double>& s = script[id];
    if (s.empty()) return 1.0;
    const double ms = s.front();
    if (s.size() > 1) s.erase(s.begin());
    return ms;
  }
  std::map<std::string, std::vector<double>> script;
  std::vector<std::string> timed;

 private:
  std::string key_ = "fake gpu";
};

}  // namespace

std::span<const GemmRow> gemm_table() {
  static const GemmRow rows[] = {{TC_BACKEND_CUDA, "own", own_can_run, no_op},
                                 {TC_BACKEND_CUBLASLT, "lib", lib_can_run, no_op}};
  return rows;
}

namespace {

class DispatchTuner : public ::testing::Test {
 protected:
  DispatchTuner() {
    ctx_.device = TC_DEVICE_CUDA;
    auto gpu = std::make_unique<FakeGpu>();
    gpu_ = gpu.get();
    ctx_.impl = std::move(gpu);
    for (tc_buffer* b : {&a_, &b_, &c_}) {
      b->ctx = &ctx_;
      b->ptr = mem_;
      b->bytes = sizeof mem_;
      b->owned = false;
    }
  }

  // Validates and picks like tc_gemm; returns "row#variant".
  std::string pick(const tc_gemm_desc& d) {
    tc_gemm_batched_desc bd{};
    bd.base = d;
    bd.batch = 1;
    GemmProblem p;
    EXPECT_EQ(validate_gemm(&ctx_, bd, &a_, &b_, &c_, nullptr, &p), TC_SUCCESS)
        << tc_last_error_message();
    const GemmRow* row = pick_gemm_row(p);
    if (row == nullptr) return tc_last_error_message();
    return std::string(row->name) + "#" + std::to_string(p.variant);
  }

  static tc_gemm_desc desc(tc_dtype_t t, int32_t M = 96) {
    return {M, 80, 64, t, t, t, TC_DTYPE_F32, false, false, 1.0f, 0.0f, 0, 0, 0};
  }

  ~DispatchTuner() override {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }

  std::string path_ = temp_cache_path();
  Env cache_{"TC_AUTOTUNE_CACHE", path_.c_str()};
  Env tune_on_{"TC_AUTOTUNE", nullptr};
  Env no_force_{"TC_GEMM_ROW", nullptr};
  tc_context ctx_;
  FakeGpu* gpu_ = nullptr;
  alignas(256) unsigned char mem_[1 << 17] = {};
  tc_buffer a_, b_, c_;
};

TEST_F(DispatchTuner, RepeatedCallAsksNoRowAgainAndAChangedFieldDecidesAfresh) {
  gpu_->script = {{"own#0", {2.0}}, {"lib#0", {1.0}}, {"lib#1", {3.0}}};
  EXPECT_EQ(pick(desc(TC_DTYPE_F16)), "lib#0");
  EXPECT_EQ(gpu_->timed.size(), 3u);
  // The call after the tuning call finds the stored winner (storing it changed the cache's
  // generation, so the tuning call's decision is not trusted); the one after that is a repeat.
  EXPECT_EQ(pick(desc(TC_DTYPE_F16)), "lib#0");
  EXPECT_EQ(gpu_->timed.size(), 3u) << "the class was tuned twice";
  g_can_run_calls = 0;
  EXPECT_EQ(pick(desc(TC_DTYPE_F16)), "lib#0");
  EXPECT_EQ(g_can_run_calls, 0) << "a repeated call asked a row's can_run";
  // Each field of the signature on its own: the decision is made again (can_run asked).
  tc_gemm_desc d = desc(TC_DTYPE_F16);
  std::vector<std::pair<const char*, tc_gemm_desc>> changes;
  d.lda = 70, changes.push_back({"lda", d}), d = desc(TC_DTYPE_F16);
  d.transpose_b = true, changes.push_back({"transpose_b", d}), d = desc(TC_DTYPE_F16);
  d.alpha = 2.0f, changes.push_back({"alpha", d}), d = desc(TC_DTYPE_F16);
  d.beta = 1.0f, changes.push_back({"beta", d}), d = desc(TC_DTYPE_F16);
  d.c_dtype = TC_DTYPE_F32, changes.push_back({"c_dtype", d}), d = desc(TC_DTYPE_F16);
  for (auto& [what, changed] : changes) {
    // Tuning the previous change's class stored a winner (a new generation): the first call of
    // the base signature decides again, the second is served by the memo.
    pick(desc(TC_DTYPE_F16));
    g_can_run_calls = 0;
    pick(desc(TC_DTYPE_F16));
    EXPECT_EQ(g_can_run_calls, 0);
    pick(changed);
    EXPECT_GT(g_can_run_calls, 0) << what << " changed but the earlier decision was reused";
  }
  // A dtype the first row declines: never the remembered row.
  gpu_->script["lib#0"] = {1.0};
  EXPECT_EQ(pick(desc(TC_DTYPE_F32)), "lib#0");
  gpu_->script["lib#0"] = {5.0};
  gpu_->script["own#0"] = {1.0};
  EXPECT_EQ(pick(desc(TC_DTYPE_F16, 500)), "own#0");
}

TEST_F(DispatchTuner, EnvironmentChangesDecideAfreshOtherVariablesDoNot) {
  EXPECT_EQ(pick(desc(TC_DTYPE_F16)), "lib#0");  // all timings equal: the reference stays
  EXPECT_EQ(pick(desc(TC_DTYPE_F16)), "lib#0");  // reads the stored winner
  g_can_run_calls = 0;
  {
    Env other("SOME_UNRELATED_VARIABLE", "1");
    pick(desc(TC_DTYPE_F16));
    EXPECT_EQ(g_can_run_calls, 0);
  }
  {
    Env knob("TC_SOME_KNOB", "1");
    pick(desc(TC_DTYPE_F16));
    EXPECT_GT(g_can_run_calls, 0) << "a TC_* knob changed but the earlier decision was reused";
  }
  {
    Env ladder("TC_AUTOTUNE", "0");
    EXPECT_EQ(pick(desc(TC_DTYPE_F16)), "own#0");
    Env force("TC_GEMM_ROW", "lib");
    EXPECT_EQ(pick(desc(TC_DTYPE_F16)), "lib#0");
  }
}

TEST_F(DispatchTuner, TheReferenceIsKeptUnlessAnotherIsMoreThanFivePercentFaster) {
  // lib#0 is cuBLASLt's variant 0 (the direct caller's algorithm): own and lib#1 within 5% of
  // it do not replace it; more than 5% faster, they do (the ladder rule between them: 1%).
  gpu_->script = {{"own#0", {0.960}}, {"lib#0", {1.000}}, {"lib#1", {0.958}}};
  EXPECT_EQ(pick(desc(TC_DTYPE_F16)), "lib#0");
  gpu_->script = {{"own#0", {0.940}}, {"lib#0", {1.000}}, {"lib#1", {0.935}}};
  EXPECT_EQ(pick(desc(TC_DTYPE_F16, 200)), "own#0");
  gpu_->script = {{"own#0", {1.000}}, {"lib#0", {1.000}}, {"lib#1", {0.900}}};
  EXPECT_EQ(pick(desc(TC_DTYPE_F16, 300)), "lib#1");
}

TEST_F(DispatchTuner, NearTiesAreTimedAgainInReverseOrderAndAveraged) {
  // First pass: lib#1 looks 2% faster than lib#0 (and own is 10% slower: not timed again); the
  // second pass, in reverse order, finds lib#1 4% slower: the means (1.01 vs 1.00) keep lib#0.
  gpu_->script = {{"own#0", {1.10}}, {"lib#0", {1.00, 1.00}}, {"lib#1", {0.98, 1.04}}};
  EXPECT_EQ(pick(desc(TC_DTYPE_F16)), "lib#0");
  const std::vector<std::string> order = {"own#0", "lib#0", "lib#1", "lib#1", "lib#0"};
  EXPECT_EQ(gpu_->timed, order);
}

}  // namespace
}  // namespace tc
