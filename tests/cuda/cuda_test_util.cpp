#include "cuda_test_util.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/reference.h"

namespace tc::test {

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* v = std::getenv(name)) old_ = v;
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (old_)
    setenv(name_.c_str(), old_->c_str(), 1);
  else
    unsetenv(name_.c_str());
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "tc_cuda_test_XXXXXX").string();
  if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

GemmInputs make_inputs(const tc_gemm_desc& d, int32_t batch, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t na = size_t(d.M) * d.K, nb = size_t(d.K) * d.N, nc = size_t(d.M) * d.N;
  HostMatrix A = make_matrix(d.a_dtype, na * batch), B = make_matrix(d.b_dtype, nb * batch);
  HostMatrix C = make_matrix(d.c_dtype, nc * batch);
  fill_random(A, rng);
  fill_random(B, rng);
  fill_random(C, rng);
  return {d, batch, std::move(A.bytes), std::move(B.bytes), std::move(C.bytes)};
}

RunResult run_gemm_bytes(tc_context_t* ctx, const GemmInputs& in) {
  RunResult r;
  const tc_gemm_desc& d = in.d;
  tc_buffer_t *a = nullptr, *b = nullptr, *c = nullptr;
  auto upload = [&](const std::vector<uint8_t>& v, tc_buffer_t** buf) {
    if (r.status == TC_SUCCESS) r.status = tc_buffer_alloc(ctx, v.size(), buf);
    if (r.status == TC_SUCCESS) r.status = tc_buffer_write(*buf, 0, v.data(), v.size());
  };
  upload(in.a, &a);
  upload(in.b, &b);
  upload(in.c, &c);
  if (r.status == TC_SUCCESS) {
    if (in.batch > 1) {
      tc_gemm_batched_desc bd{d, in.batch, int64_t(d.M) * d.K, int64_t(d.K) * d.N,
                              int64_t(d.M) * d.N};
      r.status = tc_gemm_batched(ctx, &bd, a, b, c);
    } else {
      r.status = tc_gemm(ctx, &d, a, b, c);
    }
  }
  if (r.status == TC_SUCCESS) {
    r.instance = tc_last_instance();
    r.backend = tc_last_backend();
    r.c.resize(in.c.size());
    r.status = tc_buffer_read(c, 0, r.c.data(), r.c.size());
  } else {
    r.message = tc_last_error_message();
  }
  for (auto* x : {a, b, c})
    if (x) tc_buffer_free(x);
  return r;
}

bool context_is_sm90a(const tc_context_t* ctx) {
  tc_device_info info{};
  return tc_context_device_info(ctx, &info) == TC_SUCCESS && info.cc_major == 9 &&
         info.cc_minor == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace tc::test
