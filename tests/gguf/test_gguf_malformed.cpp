// Malformed GGUF input: each case patches the spec's worked example (whose field offsets are
// listed in spec §2.6) or crafts bytes, and expects TC_ERROR_INVALID_FORMAT with a message
// that names the problem and the byte offset where it is. Every prefix of a valid file is
// also parsed (the ASan build turns any out-of-bounds read into a failure).
#include <gtest/gtest.h>

#include <functional>

#include "gguf/gguf.h"
#include "gguf_test_util.h"

namespace tc::gguf_test {
namespace {

std::vector<uint8_t> spec_image() {
  return spec_example_bytes();
}

struct Case {
  const char* name;
  std::function<void(std::vector<uint8_t>&)> patch;
  std::vector<std::string> expect;  // substrings of the message
};

std::string parse_message(const std::vector<uint8_t>& img, tc_status_t* st) {
  gguf::Parsed p;
  *st = gguf::parse(img.data(), img.size(), "t.gguf", &p);
  return tc_last_error_message();
}

TEST(GgufMalformed, EachCaseHasItsMessage) {
  const std::vector<Case> cases = {
      {"empty",
       [](auto& b) { b.clear(); },
       {"byte offset 0:", "the magic needs 4 bytes but the file ends at byte 0"}},
      {"bad magic", [](auto& b) { b[0] = 'X'; }, {"byte offset 0:", "bad magic 0x46554758"}},
      {"version 1", [](auto& b) { set_u32(b, 4, 1); }, {"byte offset 4:", "unsupported version 1"}},
      {"version 4", [](auto& b) { set_u32(b, 4, 4); }, {"byte offset 4:", "unsupported version 4"}},
      {"big-endian",
       [](auto& b) { set_u32(b, 4, 0x03000000); },
       {"byte offset 4:", "byte-swapped"}},
      {"absurd tensor count",
       [](auto& b) { set_u64(b, 8, 1ull << 62); },
       {"byte offset 8:", "tensor count 4611686018427387904 cannot fit"}},
      {"absurd kv count",
       [](auto& b) { set_u64(b, 16, 1ull << 40); },
       {"byte offset 16:", "metadata count 1099511627776 cannot fit"}},
      {"key length past end",
       [](auto& b) { set_u64(b, 0x18, 1ull << 50); },
       {"byte offset 24:", "the key of metadata entry 0 has length 1125899906842624"}},
      {"unknown value type",
       [](auto& b) { set_u32(b, 0x34, 99); },
       {"byte offset 52:", "('general.architecture') has unknown value type 99"}},
      {"string past end",
       [](auto& b) { set_u64(b, 0x38, 5000); },
       {"byte offset 56:", "has length 5000 but only"}},
      {"n_dims 5",
       [](auto& b) { set_u32(b, 0x63, 5); },
       {"byte offset 99:", "tensor 0 ('a') has n_dims = 5 (must be 1..4)"}},
      {"n_dims 0", [](auto& b) { set_u32(b, 0x63, 0); }, {"has n_dims = 0"}},
      {"negative dim",
       [](auto& b) { set_u64(b, 0x6f, ~0ull); },
       {"byte offset 111:", "ne[1] = -1, negative as int64"}},
      {"overflowing shape",
       [](auto& b) {
         set_u64(b, 0x67, 1ull << 32);
         set_u64(b, 0x6f, 1ull << 32);
       },
       {"byte offset 111:", "element count overflows int64 at ne[1]"}},
      {"retired type",
       [](auto& b) { set_u32(b, 0x77, 4); },
       {"byte offset 119:", "unknown or retired ggml type id 4"}},
      {"unknown type",
       [](auto& b) { set_u32(b, 0x98, 77); },
       {"byte offset 152:", "tensor 1 ('b') has unknown or retired ggml type id 77"}},
      {"block multiple",
       [](auto& b) { set_u64(b, 0x90, 48); },
       {"byte offset 152:", "ne[0] = 48, not a multiple of the Q8_0 block size 32"}},
      {"misaligned offset",
       [](auto& b) { set_u64(b, 0x9c, 36); },
       {"byte offset 156:", "data offset 36, not a multiple of the alignment 32"}},
      {"non-contiguous offset",
       [](auto& b) { set_u64(b, 0x9c, 64); },
       {"byte offset 156:", "data offset 64, expected 32 (tensor data must be contiguous)"}},
      {"data past end",
       [](auto& b) { b.resize(0xe0 + 60); },
       {"byte offset 131:",
        "tensor 'b' data [224, 292) runs past the end of the file (284 bytes)"}},
      {"data section past the end",  // zero-byte tensors, but the section starts past EOF
       [](auto& b) {
         set_u64(b, 0x6f, 0);  // a: ne = [3, 0]
         set_u64(b, 0x90, 0);  // b: ne = [0]
         set_u64(b, 0x9c, 0);
         b.resize(0xbf);
       },
       {"byte offset 164:", "the data section starts at byte 192 (aligned to 32), past the end"}},
      {"duplicate tensor name",
       [](auto& b) { b[0x83 + 8] = 'a'; },
       {"byte offset 131:", "duplicate tensor name 'a' (tensor 0 has it too)"}},
  };
  const auto base = spec_image();
  ASSERT_EQ(base.size(), 320u);
  for (const Case& c : cases) {
    auto img = base;
    c.patch(img);
    tc_status_t st;
    const std::string msg = parse_message(img, &st);
    EXPECT_EQ(st, TC_ERROR_INVALID_FORMAT) << c.name;
    for (const auto& e : c.expect) {
      EXPECT_NE(msg.find(e), std::string::npos)
          << c.name << ": '" << msg << "' lacks '" << e << "'";
    }
    EXPECT_NE(msg.find("gguf file 't.gguf'"), std::string::npos) << c.name << ": " << msg;
  }
}

Bytes header(uint64_t n_tensors, uint64_t n_kv) {
  Bytes b;
  b.raw("GGUF", 4).u32(3).u64(n_tensors).u64(n_kv);
  return b;
}

TEST(GgufMalformed, CraftedMetadata) {
  struct Crafted {
    const char* name;
    Bytes bytes;
    std::string expect;
  };
  std::vector<Crafted> cases;
  cases.push_back({"duplicate key", header(0, 2).str("k").u32(4).u32(1).str("k").u32(4).u32(2),
                   "byte offset 41: duplicate key 'k' (entry 0 has it too)"});
  cases.push_back({"empty key", header(0, 1).str("").u32(4).u32(1),
                   "byte offset 24: metadata entry 0 has an empty key"});
  cases.push_back({"bool 2", header(0, 1).str("b").u32(7).raw("\x02", 1),
                   "byte offset 37: metadata entry 0 ('b') is a BOOL with byte value 2"});
  cases.push_back({"nested array", header(0, 1).str("a").u32(9).u32(9).u64(1),
                   "byte offset 37: metadata entry 0 ('a') is an array of arrays"});
  cases.push_back({"huge array", header(0, 1).str("a").u32(9).u32(5).u64(1ull << 61),
                   "claims 2305843009213693952 elements of 4 bytes"});
  cases.push_back({"huge string array", header(0, 1).str("a").u32(9).u32(8).u64(1ull << 40),
                   "claims 1099511627776 strings"});
  cases.push_back({"alignment type", header(0, 1).str("general.alignment").u32(5).u32(32),
                   "general.alignment has type INT32 (must be UINT32)"});
  cases.push_back({"alignment 48", header(0, 1).str("general.alignment").u32(4).u32(48),
                   "byte offset 53: general.alignment = 48 is not a power of two"});
  cases.push_back({"long name", header(1, 0).str(std::string(64, 'x')).u32(1).u64(32).u32(0).u64(0),
                   "byte offset 24: tensor 0 has a 64-byte name (at most 63)"});
  cases.push_back({"truncated array", header(0, 1).str("a").u32(9).u32(4).u64(3).u32(1),
                   "claims 3 elements of 4 bytes but only 4 bytes remain"});
  for (const auto& c : cases) {
    tc_status_t st;
    const std::string msg = parse_message(c.bytes.b, &st);
    EXPECT_EQ(st, TC_ERROR_INVALID_FORMAT) << c.name;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << ": '" << msg << "'";
  }
}

TEST(GgufMalformed, EveryPrefixFailsCleanly) {
  const auto base = spec_image();
  for (size_t n = 0; n < base.size(); ++n) {
    // Exact-size buffers so that ASan sees any read past the end.
    std::vector<uint8_t> img(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(n));
    tc_status_t st;
    const std::string msg = parse_message(img, &st);
    // The data section of the last tensor ends at 292; the trailing padding is optional.
    if (n >= 0xe0 + 68) {
      EXPECT_EQ(st, TC_SUCCESS) << n << ": " << msg;
    } else {
      ASSERT_EQ(st, TC_ERROR_INVALID_FORMAT) << "prefix " << n;
      ASSERT_NE(msg.find("byte offset"), std::string::npos) << n << ": " << msg;
    }
  }
}

}  // namespace
}  // namespace tc::gguf_test
