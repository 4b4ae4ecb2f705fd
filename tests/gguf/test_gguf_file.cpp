// GGUF writer and reader: the spec's worked example byte by byte, then a round trip of every
// metadata type, quantized tensors and a custom alignment through the C API.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gguf_test_util.h"

namespace tc::gguf_test {
namespace {

uint64_t u64_at(const std::vector<uint8_t>& img, size_t at) {
  uint64_t v;
  std::memcpy(&v, &img[at], 8);
  return v;
}
uint32_t u32_at(const std::vector<uint8_t>& img, size_t at) {
  uint32_t v;
  std::memcpy(&v, &img[at], 4);
  return v;
}

TEST(GgufWriter, SpecWorkedExampleLayout) {
  const std::string path = temp_path("spec_example.gguf");
  ASSERT_EQ(write_spec_example(path), TC_SUCCESS) << tc_last_error_message();
  const auto img = read_all(path);
  ASSERT_EQ(img.size(), 320u);           // spec §2.6: file size 320
  EXPECT_EQ(img, spec_example_bytes());  // byte-identical to the layout built by hand
  EXPECT_EQ(std::string(img.begin(), img.begin() + 4), "GGUF");
  EXPECT_EQ(u32_at(img, 0x004), 3u);
  EXPECT_EQ(u64_at(img, 0x008), 2u);
  EXPECT_EQ(u64_at(img, 0x010), 2u);
  EXPECT_EQ(u64_at(img, 0x018), 20u);
  EXPECT_EQ(u32_at(img, 0x034), 8u);
  EXPECT_EQ(u64_at(img, 0x038), 4u);
  EXPECT_EQ(u64_at(img, 0x044), 6u);
  EXPECT_EQ(u32_at(img, 0x052), 4u);
  EXPECT_EQ(u32_at(img, 0x056), 7u);
  EXPECT_EQ(u64_at(img, 0x05a), 1u);
  EXPECT_EQ(u32_at(img, 0x063), 2u);
  EXPECT_EQ(u64_at(img, 0x067), 3u);
  EXPECT_EQ(u64_at(img, 0x06f), 2u);
  EXPECT_EQ(u32_at(img, 0x077), 0u);
  EXPECT_EQ(u64_at(img, 0x07b), 0u);
  EXPECT_EQ(u32_at(img, 0x08c), 1u);
  EXPECT_EQ(u64_at(img, 0x090), 64u);
  EXPECT_EQ(u32_at(img, 0x098), 8u);
  EXPECT_EQ(u64_at(img, 0x09c), 32u);
  for (size_t i = 0x0a4; i < 0x0c0; ++i) ASSERT_EQ(img[i], 0) << i;
  float a5;
  std::memcpy(&a5, &img[0x0c0 + 20], 4);
  EXPECT_EQ(a5, 5.0f);
  for (size_t i = 0x0c0 + 24; i < 0x0e0; ++i) ASSERT_EQ(img[i], 0) << i;
  for (size_t i = 0x0e0; i < 0x0e0 + 68; ++i) ASSERT_EQ(img[i], 0x11) << i;

  tc_gguf_t* f = nullptr;
  ASSERT_EQ(tc_gguf_open(path.c_str(), &f), TC_SUCCESS) << tc_last_error_message();
  int64_t n = 0;
  ASSERT_EQ(tc_gguf_tensor_count(f, &n), TC_SUCCESS);
  ASSERT_EQ(n, 2);
  tc_gguf_tensor_desc t;
  ASSERT_EQ(tc_gguf_tensor_info(f, 1, &t), TC_SUCCESS);
  EXPECT_STREQ(t.name, "b");
  EXPECT_STREQ(t.type_name, "Q8_0");
  EXPECT_EQ(t.dtype, TC_DTYPE_Q8_0);
  EXPECT_EQ(t.file_offset, 0x0e0u);
  EXPECT_EQ(t.nbytes, 68u);
  int64_t idx = -1;
  ASSERT_EQ(tc_gguf_find_key(f, "test.n", &idx), TC_SUCCESS);
  int64_t v = 0;
  ASSERT_EQ(tc_gguf_get_int(f, idx, &v), TC_SUCCESS);
  EXPECT_EQ(v, 7);
  double dv;
  EXPECT_EQ(tc_gguf_get_float(f, idx, &dv), TC_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tc_last_error_message()).find("test.n"), std::string::npos);
  EXPECT_EQ(tc_gguf_tensor_info(f, 2, &t), TC_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(tc_gguf_find_tensor(f, "nope", &idx), TC_ERROR_INVALID_VALUE);
  tc_gguf_close(f);
  std::remove(path.c_str());
}

TEST(GgufWriter, RoundTripMetadataTensorsAlignment) {
  // Source file with every scalar type and arrays, crafted by hand; the writer copies it.
  Bytes src;
  src.raw("GGUF", 4).u32(3).u64(0).u64(5);
  src.str("general.alignment").u32(4).u32(64);
  src.str("k.i8").u32(1).raw("\xfe", 1);
  src.str("k.f64").u32(12);
  const double pi = 3.141592653589793;
  src.raw(&pi, 8);
  src.str("k.strs").u32(9).u32(8).u64(2).str("alpha").str("");
  src.str("k.i32s").u32(9).u32(5).u64(3);
  const int32_t ints[3] = {-1, 2, 1 << 30};
  src.raw(ints, sizeof ints);
  const std::string src_path = temp_path("src.gguf");
  write_all(src_path, src.b);
  tc_gguf_t* in = nullptr;
  ASSERT_EQ(tc_gguf_open(src_path.c_str(), &in), TC_SUCCESS) << tc_last_error_message();

  tc_gguf_writer_t* w = nullptr;
  ASSERT_EQ(tc_gguf_writer_create(&w), TC_SUCCESS);
  for (int64_t i = 0; i < 5; ++i) ASSERT_EQ(tc_gguf_writer_copy_kv(w, in, i), TC_SUCCESS) << i;
  EXPECT_EQ(tc_gguf_writer_copy_kv(w, in, 0), TC_ERROR_INVALID_VALUE);  // duplicate key
  std::mt19937 rng(3);
  std::vector<float> x(3 * 512);
  for (auto& v : x) v = std::normal_distribution<float>()(rng);
  std::vector<uint8_t> q(3 * tc_quant_row_bytes(TC_DTYPE_Q4_K, 512));
  const int64_t ne[2] = {512, 3}, ne_odd[1] = {96};
  std::vector<uint8_t> q4(tc_quant_row_bytes(TC_DTYPE_Q4_0, 96), 0x5a);
  ASSERT_EQ(tc_quantize(TC_DTYPE_Q4_K, x.data(), 3, 512, q.data(), q.size()), TC_SUCCESS);
  ASSERT_EQ(tc_gguf_writer_add_tensor(w, "w.q4k", 12, 2, ne, q.data(), q.size()), TC_SUCCESS);
  ASSERT_EQ(tc_gguf_writer_add_tensor(w, "w.q4_0", 2, 1, ne_odd, q4.data(), q4.size()), TC_SUCCESS);
  EXPECT_EQ(tc_gguf_writer_add_tensor(w, "w.q4_0", 2, 1, ne_odd, q4.data(), q4.size()),
            TC_ERROR_INVALID_VALUE);
  EXPECT_EQ(tc_gguf_writer_add_tensor(w, "bad", 2, 1, ne_odd, q4.data(), q4.size() - 1),
            TC_ERROR_INVALID_VALUE);
  const std::string out_path = temp_path("out.gguf");
  ASSERT_EQ(tc_gguf_writer_write(w, out_path.c_str()), TC_SUCCESS) << tc_last_error_message();
  tc_gguf_writer_destroy(w);
  tc_gguf_close(in);

  tc_gguf_t* f = nullptr;
  ASSERT_EQ(tc_gguf_open(out_path.c_str(), &f), TC_SUCCESS) << tc_last_error_message();
  tc_gguf_tensor_desc t;
  ASSERT_EQ(tc_gguf_tensor_info(f, 1, &t), TC_SUCCESS);
  EXPECT_EQ(t.file_offset % 64, 0u);  // general.alignment = 64 was honoured
  const void* data = nullptr;
  ASSERT_EQ(tc_gguf_tensor_data(f, 0, &data), TC_SUCCESS);
  EXPECT_EQ(std::memcmp(data, q.data(), q.size()), 0);
  ASSERT_EQ(tc_gguf_tensor_data(f, 1, &data), TC_SUCCESS);
  EXPECT_EQ(std::memcmp(data, q4.data(), q4.size()), 0);

  int64_t idx;
  int64_t iv;
  ASSERT_EQ(tc_gguf_find_key(f, "k.i8", &idx), TC_SUCCESS);
  ASSERT_EQ(tc_gguf_get_int(f, idx, &iv), TC_SUCCESS);
  EXPECT_EQ(iv, -2);
  double dv;
  ASSERT_EQ(tc_gguf_find_key(f, "k.f64", &idx), TC_SUCCESS);
  ASSERT_EQ(tc_gguf_get_float(f, idx, &dv), TC_SUCCESS);
  EXPECT_EQ(dv, pi);
  ASSERT_EQ(tc_gguf_find_key(f, "k.strs", &idx), TC_SUCCESS);
  const char* s;
  size_t len;
  ASSERT_EQ(tc_gguf_get_string(f, idx, 0, &s, &len), TC_SUCCESS);
  EXPECT_EQ(std::string(s, len), "alpha");
  ASSERT_EQ(tc_gguf_get_string(f, idx, 1, &s, &len), TC_SUCCESS);
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(tc_gguf_get_string(f, idx, 2, &s, &len), TC_ERROR_OUT_OF_RANGE);
  ASSERT_EQ(tc_gguf_find_key(f, "k.i32s", &idx), TC_SUCCESS);
  tc_gguf_type_t type, elem;
  uint64_t count;
  ASSERT_EQ(tc_gguf_kv_info(f, idx, nullptr, &type, &elem, &count), TC_SUCCESS);
  EXPECT_EQ(type, TC_GGUF_ARRAY);
  EXPECT_EQ(elem, TC_GGUF_INT32);
  EXPECT_EQ(count, 3u);
  ASSERT_EQ(tc_gguf_get_array_data(f, idx, &data), TC_SUCCESS);
  EXPECT_EQ(std::memcmp(data, ints, sizeof ints), 0);
  tc_gguf_close(f);
  std::remove(src_path.c_str());
  std::remove(out_path.c_str());
}

TEST(GgufWriter, RejectsBadInput) {
  tc_gguf_writer_t* w = nullptr;
  ASSERT_EQ(tc_gguf_writer_create(&w), TC_SUCCESS);
  const uint32_t three = 3;
  EXPECT_EQ(tc_gguf_writer_add_kv(w, "general.alignment", TC_GGUF_UINT32, &three, 4),
            TC_ERROR_INVALID_VALUE);
  EXPECT_EQ(tc_gguf_writer_add_kv(w, "", TC_GGUF_UINT32, &three, 4), TC_ERROR_INVALID_VALUE);
  EXPECT_EQ(tc_gguf_writer_add_kv(w, "x", TC_GGUF_UINT32, &three, 2), TC_ERROR_INVALID_VALUE);
  const int64_t ne[1] = {100};
  const std::string long_name(64, 'n');
  std::vector<uint8_t> d(400);
  EXPECT_EQ(tc_gguf_writer_add_tensor(w, long_name.c_str(), 0, 1, ne, d.data(), 400),
            TC_ERROR_INVALID_VALUE);
  EXPECT_EQ(tc_gguf_writer_add_tensor(w, "q", 2, 1, ne, d.data(), 400), TC_ERROR_INVALID_SHAPE);
  EXPECT_NE(std::string(tc_last_error_message()).find("ne[0] = 100"), std::string::npos);
  EXPECT_EQ(tc_gguf_writer_add_tensor(w, "q", 4, 1, ne, d.data(), 400), TC_ERROR_INVALID_VALUE);
  EXPECT_EQ(tc_gguf_writer_write(w, "/nonexistent-dir/x.gguf"), TC_ERROR_IO);
  tc_gguf_writer_destroy(w);
}

TEST(GgufOpen, ReportsFileErrors) {
  tc_gguf_t* f = reinterpret_cast<tc_gguf_t*>(0x1);
  EXPECT_EQ(tc_gguf_open("/nonexistent/x.gguf", &f), TC_ERROR_IO);
  EXPECT_EQ(f, nullptr);
  EXPECT_NE(std::string(tc_last_error_message()).find("/nonexistent/x.gguf"), std::string::npos);
  const std::string path = temp_path("bad_magic.gguf");
  auto img = spec_example_bytes();
  img[1] = 'X';
  write_all(path, img);
  EXPECT_EQ(tc_gguf_open(path.c_str(), &f), TC_ERROR_INVALID_FORMAT);
  EXPECT_NE(std::string(tc_last_error_message()).find(path), std::string::npos);
  write_all(path, {});
  EXPECT_EQ(tc_gguf_open(path.c_str(), &f), TC_ERROR_INVALID_FORMAT);
  EXPECT_EQ(tc_gguf_open("/tmp", &f), TC_ERROR_IO);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tc::gguf_test
