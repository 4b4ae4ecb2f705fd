// Helpers for the GGUF tests: a raw byte builder (to craft malformed files the writer refuses
// to produce) and the worked example of spec §2.6, written through tc's writer.
#pragma once

#include <tc/tc.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tc::gguf_test {

struct Bytes {
  std::vector<uint8_t> b;
  Bytes& u32(uint32_t v) { return raw(&v, 4); }
  Bytes& u64(uint64_t v) { return raw(&v, 8); }
  Bytes& str(const std::string& s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  Bytes& raw(const void* p, size_t n) {
    const size_t at = b.size();  // resize + memcpy: gcc 12 misreads insert() here
    b.resize(at + n);
    if (n > 0) std::memcpy(b.data() + at, p, n);
    return *this;
  }
  Bytes& pad_to(size_t a) {
    while (b.size() % a) b.push_back(0);
    return *this;
  }
};

inline std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/tc_gguf_test_" + name;
}

inline std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline void write_all(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Spec §2.6: general.architecture = "test", test.n = u32 7, tensor a F32 ne=[3,2] (0..5),
// tensor b Q8_0 ne=[64] (68 bytes of 0x11). Returns the status of the writer.
inline tc_status_t write_spec_example(const std::string& path) {
  static const float a[6] = {0, 1, 2, 3, 4, 5};
  static const std::vector<uint8_t> b(68, 0x11);
  tc_gguf_writer_t* w = nullptr;
  tc_status_t st = tc_gguf_writer_create(&w);
  const uint32_t n = 7;
  const int64_t ne_a[2] = {3, 2}, ne_b[1] = {64};
  if (st == TC_SUCCESS)
    st = tc_gguf_writer_add_kv(w, "general.architecture", TC_GGUF_STRING, "test", 4);
  if (st == TC_SUCCESS) st = tc_gguf_writer_add_kv(w, "test.n", TC_GGUF_UINT32, &n, 4);
  if (st == TC_SUCCESS) st = tc_gguf_writer_add_tensor(w, "a", 0, 2, ne_a, a, sizeof a);
  if (st == TC_SUCCESS) st = tc_gguf_writer_add_tensor(w, "b", 8, 1, ne_b, b.data(), b.size());
  if (st == TC_SUCCESS) st = tc_gguf_writer_write(w, path.c_str());
  tc_gguf_writer_destroy(w);
  return st;
}

// The same file built byte by byte from the layout of spec §2.6 (no tc code involved).
inline std::vector<uint8_t> spec_example_bytes() {
  Bytes b;
  b.raw("GGUF", 4).u32(3).u64(2).u64(2);
  b.str("general.architecture").u32(8).str("test");
  b.str("test.n").u32(4).u32(7);
  b.str("a").u32(2).u64(3).u64(2).u32(0).u64(0);
  b.str("b").u32(1).u64(64).u32(8).u64(32);
  b.pad_to(32);
  const float a[6] = {0, 1, 2, 3, 4, 5};
  b.raw(a, sizeof a).pad_to(32);
  const std::vector<uint8_t> q(68, 0x11);
  b.raw(q.data(), q.size()).pad_to(32);
  return b.b;
}

inline void set_u32(std::vector<uint8_t>& img, size_t at, uint32_t v) {
  std::memcpy(&img[at], &v, 4);
}
inline void set_u64(std::vector<uint8_t>& img, size_t at, uint64_t v) {
  std::memcpy(&img[at], &v, 8);
}

}  // namespace tc::gguf_test
