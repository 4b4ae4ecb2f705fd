// Driver for gguf_py_crosscheck.py (public API only):
//   gguf_xcheck quantize FMT ROWS COLS IN.f32 OUT.bin     tc_quantize
//   gguf_xcheck dequantize FMT ROWS COLS IN.bin OUT.f32   tc_dequantize
//   gguf_xcheck write OUT.gguf ROWS COLS IN.f32           GGUF with metadata + q4_0/q8_0/q4_k/f32
//   gguf_xcheck read FILE                                 one line per metadata entry / tensor
#include <tc/tc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::vector<char> slurp(const char* path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void spit(const char* path, const void* p, size_t n) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
}

tc_dtype_t format(const std::string& s) {
  if (s == "q4_0") return TC_DTYPE_Q4_0;
  if (s == "q8_0") return TC_DTYPE_Q8_0;
  if (s == "q4_k") return TC_DTYPE_Q4_K;
  if (s == "q6_k") return TC_DTYPE_Q6_K;
  std::fprintf(stderr, "unknown format %s\n", s.c_str());
  std::exit(2);
}

int check(tc_status_t st) {
  if (st != TC_SUCCESS) {
    std::fprintf(stderr, "error: %s\n", tc_last_error_message());
    std::exit(1);
  }
  return 0;
}

uint64_t fnv1a(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 1099511628211ull;
  return h;
}

int write_file(const char* out, int64_t rows, int64_t cols, const char* in) {
  const auto raw = slurp(in);
  const auto* x = reinterpret_cast<const float*>(raw.data());
  tc_gguf_writer_t* w;
  check(tc_gguf_writer_create(&w));
  check(tc_gguf_writer_add_kv(w, "general.architecture", TC_GGUF_STRING, "tcxcheck", 8));
  const uint32_t qv = 2;
  const int32_t i32 = -12345;
  const float f32 = 0.25f;
  const uint8_t yes = 1;
  check(tc_gguf_writer_add_kv(w, "general.quantization_version", TC_GGUF_UINT32, &qv, 4));
  check(tc_gguf_writer_add_kv(w, "xcheck.i32", TC_GGUF_INT32, &i32, 4));
  check(tc_gguf_writer_add_kv(w, "xcheck.f32", TC_GGUF_FLOAT32, &f32, 4));
  check(tc_gguf_writer_add_kv(w, "xcheck.bool", TC_GGUF_BOOL, &yes, 1));
  std::vector<std::vector<uint8_t>> keep;
  const int64_t ne[2] = {cols, rows};
  for (const char* f : {"q4_0", "q8_0", "q4_k"}) {
    keep.emplace_back(tc_quant_row_bytes(format(f), cols) * rows);
    check(tc_quantize(format(f), x, rows, cols, keep.back().data(), keep.back().size()));
    const uint32_t t = f[1] == '4' && f[3] == '0' ? 2 : f[1] == '8' ? 8 : 12;
    check(tc_gguf_writer_add_tensor(w, (std::string("w.") + f).c_str(), t, 2, ne,
                                    keep.back().data(), keep.back().size()));
  }
  check(tc_gguf_writer_add_tensor(w, "w.f32", 0, 2, ne, x, size_t(rows * cols) * 4));
  check(tc_gguf_writer_write(w, out));
  tc_gguf_writer_destroy(w);
  return 0;
}

int read_file(const char* path) {
  tc_gguf_t* f;
  check(tc_gguf_open(path, &f));
  int64_t n_kv, n_t;
  tc_gguf_kv_count(f, &n_kv);
  tc_gguf_tensor_count(f, &n_t);
  for (int64_t i = 0; i < n_kv; ++i) {
    const char* key;
    tc_gguf_type_t type, elem;
    uint64_t count;
    tc_gguf_kv_info(f, i, &key, &type, &elem, &count);
    const char* s;
    size_t len;
    int64_t iv;
    double dv;
    if (type == TC_GGUF_STRING && tc_gguf_get_string(f, i, 0, &s, &len) == TC_SUCCESS) {
      std::printf("kv %s %d %.*s\n", key, type, static_cast<int>(len), s);
    } else if (type == TC_GGUF_ARRAY) {
      std::printf("kv %s %d %d %llu\n", key, type, elem, static_cast<unsigned long long>(count));
    } else if (tc_gguf_get_int(f, i, &iv) == TC_SUCCESS) {
      std::printf("kv %s %d %lld\n", key, type, static_cast<long long>(iv));
    } else if (tc_gguf_get_float(f, i, &dv) == TC_SUCCESS) {
      std::printf("kv %s %d %.9g\n", key, type, dv);
    }
  }
  for (int64_t i = 0; i < n_t; ++i) {
    tc_gguf_tensor_desc d;
    const void* data;
    check(tc_gguf_tensor_info(f, i, &d));
    check(tc_gguf_tensor_data(f, i, &data));
    std::printf("tensor %s %u %d", d.name, d.ggml_type, d.n_dims);
    for (int k = 0; k < d.n_dims; ++k) std::printf(" %lld", static_cast<long long>(d.ne[k]));
    std::printf(" %llu %016llx\n", static_cast<unsigned long long>(d.nbytes),
                static_cast<unsigned long long>(fnv1a(data, d.nbytes)));
  }
  tc_gguf_close(f);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "quantize" && argc == 7) {
    const int64_t rows = std::atoll(argv[3]), cols = std::atoll(argv[4]);
    const auto raw = slurp(argv[5]);
    std::vector<uint8_t> q(tc_quant_row_bytes(format(argv[2]), cols) * rows);
    check(tc_quantize(format(argv[2]), reinterpret_cast<const float*>(raw.data()), rows, cols,
                      q.data(), q.size()));
    spit(argv[6], q.data(), q.size());
    return 0;
  }
  if (cmd == "dequantize" && argc == 7) {
    const int64_t rows = std::atoll(argv[3]), cols = std::atoll(argv[4]);
    const auto raw = slurp(argv[5]);
    std::vector<float> y(size_t(rows * cols));
    check(tc_dequantize(format(argv[2]), raw.data(), raw.size(), rows, cols, y.data()));
    spit(argv[6], y.data(), y.size() * 4);
    return 0;
  }
  if (cmd == "write" && argc == 6)
    return write_file(argv[2], std::atoll(argv[3]), std::atoll(argv[4]), argv[5]);
  if (cmd == "read" && argc == 3) return read_file(argv[2]);
  std::fprintf(stderr, "usage: see the comment at the top of gguf_xcheck.cpp\n");
  return 2;
}
