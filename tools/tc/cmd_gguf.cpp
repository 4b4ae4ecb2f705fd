// `tc gguf ls FILE`: the header, metadata and tensors of a GGUF file.
// `tc gguf gemv FILE TENSOR [--m M] [--act8]`: runs tc_gemv_quantized on a real tensor (used in
// place through mmap), checks it against float64 of the dequantized weights and prints GB/s.
#include <fmt/format.h>
#include <tc/tc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "commands.h"

namespace {

[[noreturn]] void die(const std::string& what) {
  fmt::print(stderr, "tc gguf: {}\n", what);
  throw CLI::RuntimeError(1);
}

void check(tc_status_t st, const char* what) {
  if (st != TC_SUCCESS) die(fmt::format("{}: {}", what, tc_last_error_message()));
}

using File = std::unique_ptr<tc_gguf_t, tc_status_t (*)(tc_gguf_t*)>;

File open_file(const std::string& path) {
  tc_gguf_t* f = nullptr;
  check(tc_gguf_open(path.c_str(), &f), "open");
  return File(f, tc_gguf_close);
}

const char* type_name(tc_gguf_type_t t) {
  static const char* names[] = {"u8",   "i8",  "u16", "i16", "u32", "i32", "f32",
                                "bool", "str", "arr", "u64", "i64", "f64"};
  return static_cast<unsigned>(t) < 13 ? names[t] : "?";
}

std::string value_text(const tc_gguf_t* f, int64_t i, tc_gguf_type_t type, tc_gguf_type_t elem,
                       uint64_t count) {
  const char* s;
  size_t len;
  int64_t iv;
  double dv;
  if (type == TC_GGUF_STRING && tc_gguf_get_string(f, i, 0, &s, &len) == TC_SUCCESS) {
    std::string v(s, std::min<size_t>(len, 60));
    return fmt::format("\"{}\"{}", v, len > 60 ? "..." : "");
  }
  if (type == TC_GGUF_ARRAY) return fmt::format("[{} x {}]", count, type_name(elem));
  if (tc_gguf_get_int(f, i, &iv) == TC_SUCCESS) return std::to_string(iv);
  if (tc_gguf_get_float(f, i, &dv) == TC_SUCCESS) return fmt::format("{}", dv);
  return "(uint64 above int64)";
}

void list(const std::string& path) {
  File f = open_file(path);
  uint32_t version = 0;
  int64_t n_kv = 0, n_t = 0;
  tc_gguf_version(f.get(), &version);
  tc_gguf_kv_count(f.get(), &n_kv);
  tc_gguf_tensor_count(f.get(), &n_t);
  fmt::print("{}: GGUF v{}, {} metadata entries, {} tensors\n", path, version, n_kv, n_t);
  for (int64_t i = 0; i < n_kv; ++i) {
    const char* key;
    tc_gguf_type_t type, elem;
    uint64_t count;
    tc_gguf_kv_info(f.get(), i, &key, &type, &elem, &count);
    fmt::print("  {:<40} {:<4} {}\n", key, type_name(type),
               value_text(f.get(), i, type, elem, count));
  }
  fmt::print("  {:>4}  {:<36} {:<7} {:<24} {:>12} {:>12}\n", "#", "tensor", "type", "ne", "offset",
             "bytes");
  for (int64_t i = 0; i < n_t; ++i) {
    tc_gguf_tensor_desc d;
    tc_gguf_tensor_info(f.get(), i, &d);
    std::string ne;
    for (int k = 0; k < d.n_dims; ++k) ne += (k ? ", " : "") + std::to_string(d.ne[k]);
    fmt::print("  {:>4}  {:<36} {:<7} [{:<22}] {:>12} {:>12}\n", i, d.name, d.type_name, ne,
               d.file_offset, d.nbytes);
  }
}

void gemv(const std::string& path, const std::string& name, int M, bool act8, int reps) {
  File f = open_file(path);
  int64_t idx;
  check(tc_gguf_find_tensor(f.get(), name.c_str(), &idx), "tensor");
  tc_gguf_tensor_desc d;
  check(tc_gguf_tensor_info(f.get(), idx, &d), "tensor");
  const bool block = d.dtype == TC_DTYPE_Q4_0 || d.dtype == TC_DTYPE_Q8_0 ||
                     d.dtype == TC_DTYPE_Q4_K || d.dtype == TC_DTYPE_Q6_K;
  if (!block) die(fmt::format("tensor '{}' is {}, not Q4_0/Q8_0/Q4_K/Q6_K", name, d.type_name));
  if (d.n_dims != 2)
    die(fmt::format("tensor '{}' has {} dims; gemv needs a matrix", name, d.n_dims));
  if (M < 1) die(fmt::format("--m = {} must be positive", M));
  const int K = static_cast<int>(d.ne[0]), N = static_cast<int>(d.ne[1]);
  const void* data;
  check(tc_gguf_tensor_data(f.get(), idx, &data), "data");

  tc_context_t* ctx = nullptr;
  check(tc_context_create(&ctx, TC_DEVICE_CPU), "context");
  std::unique_ptr<tc_context_t, tc_status_t (*)(tc_context_t*)> ctx_guard(ctx, tc_context_destroy);
  tc_buffer_t *W, *X, *Y;
  // The mapping is used in place: no second copy of the weights.
  check(tc_buffer_wrap(ctx, const_cast<void*>(data), d.nbytes, &W), "wrap weights");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> ud(-1.0f, 1.0f);
  std::vector<float> x(size_t(M) * K), y(size_t(M) * N);
  for (auto& v : x) v = ud(rng);
  check(tc_buffer_alloc(ctx, x.size() * 4, &X), "alloc");
  check(tc_buffer_write(X, 0, x.data(), x.size() * 4), "write");
  check(tc_buffer_alloc(ctx, y.size() * 4, &Y), "alloc");
  const tc_quant_matmul_desc desc{
      M, N, K, static_cast<tc_dtype_t>(d.dtype), TC_DTYPE_F32, TC_DTYPE_F32, act8, 0.0f};
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    check(tc_gemv_quantized(ctx, &desc, W, nullptr, X, Y), "gemv");
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  check(tc_buffer_read(Y, 0, y.data(), y.size() * 4), "read");
  // float64 reference over the dequantized weights, one row at a time.
  const size_t row_bytes = tc_quant_row_bytes(desc.w_dtype, K);
  std::vector<float> wrow(K);
  double num = 0, den = 0;
  for (int n = 0; n < N; ++n) {
    check(tc_dequantize(desc.w_dtype, static_cast<const uint8_t*>(data) + n * row_bytes, row_bytes,
                        1, K, wrow.data()),
          "dequantize");
    for (int m = 0; m < M; ++m) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(wrow[k]) * x[size_t(m) * K + k];
      const double e = y[size_t(m) * N + n] - s;
      num += e * e;
      den += s * s;
    }
  }
  const double err = std::sqrt(num) / (std::sqrt(den) + 1e-30);
  const double bound = act8 ? 5e-3 : 1e-4;
  const double t = times[times.size() / 2];
  fmt::print(
      "{} [{} x {}] {} M={} act={}: {} | {:.1f} us, {:.2f} GB/s of weights | rms_scaled "
      "{:.2e} (bound {:.0e}) {}\n",
      name, N, K, d.type_name, M, act8 ? "8bit" : "f32", tc_last_instance(), t * 1e6,
      d.nbytes / t / 1e9, err, bound, err <= bound ? "ok" : "FAIL");
  tc_buffer_free(W);
  tc_buffer_free(X);
  tc_buffer_free(Y);
  if (!(err <= bound)) throw CLI::RuntimeError(1);
}

}  // namespace

void tc_cli_add_gguf(CLI::App& app) {
  auto* cmd = app.add_subcommand("gguf", "Inspect GGUF files and run kernels on their tensors");
  cmd->require_subcommand(1);
  auto file = std::make_shared<std::string>();
  auto* ls = cmd->add_subcommand("ls", "List metadata and tensors");
  ls->add_option("FILE", *file, "GGUF file")->required();
  ls->callback([file] { list(*file); });

  struct GemvOpts {
    std::string file, tensor;
    int m = 1, reps = 20;
    bool act8 = false;
  };
  auto o = std::make_shared<GemvOpts>();
  auto* gv = cmd->add_subcommand("gemv", "GEMV on a tensor, checked against float64, with GB/s");
  gv->add_option("FILE", o->file, "GGUF file")->required();
  gv->add_option("TENSOR", o->tensor, "tensor name")->required();
  gv->add_option("--m", o->m, "activation rows (M)");
  gv->add_option("--reps", o->reps, "timed repetitions (median printed)");
  gv->add_flag("--act8", o->act8, "let the kernel quantize activations to 8 bits");
  gv->callback([o] { gemv(o->file, o->tensor, o->m, o->act8, std::max(1, o->reps)); });
}
