// Helpers of the CUDA backend tests: scoped environment variables (the knobs TC_GEMM_ROW,
// TC_AUTOTUNE, TC_AUTOTUNE_CACHE are read at every call), a scratch folder, and one GEMM run
// whose output bytes are returned for bitwise comparisons.
#pragma once

#include <tc/tc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tc::test {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);  // value nullptr unsets
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A fresh folder under the system temp folder, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct RunResult {
  tc_status_t status = TC_SUCCESS;
  std::string message, instance;
  tc_backend_t backend = TC_BACKEND_NONE;
  std::vector<uint8_t> c;  // the output bytes
};

// Random contiguous operands for `d` (C random too, so beta != 0 is exercised), made once and
// reused across runs.
struct GemmInputs {
  tc_gemm_desc d{};
  int32_t batch = 1;
  std::vector<uint8_t> a, b, c;
};
GemmInputs make_inputs(const tc_gemm_desc& d, int32_t batch, uint64_t seed);

// One tc_gemm (batch == 1) or tc_gemm_batched with strides M*K, K*N, M*N.
RunResult run_gemm_bytes(tc_context_t* ctx, const GemmInputs& in);

// Whether the context's device is sm_90 (what the wgmma / TMA kernels are built for).
bool context_is_sm90a(const tc_context_t* ctx);

std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

}  // namespace tc::test
