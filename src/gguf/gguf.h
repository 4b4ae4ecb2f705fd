// GGUF v3 files (shared/specs/quant-formats.md §2): a bounds-checked parser over bytes, an
// mmap-backed file, and a writer whose files ggml's strict reader accepts. Every parse error
// names what is wrong and the byte offset where it was found.
#pragma once

#include <tc/tc.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tc::gguf {

enum ValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;
const char* value_type_name(uint32_t type);
size_t value_type_size(uint32_t type);  // 0 for STRING and ARRAY

// A ggml tensor type with a known block geometry (spec §1.2).
struct TensorType {
  uint32_t id;
  const char* name;
  int32_t block_elems;
  int32_t block_bytes;
};
const TensorType* tensor_type(uint32_t id);  // nullptr when unknown or retired
uint32_t ggml_type_of(tc_dtype_t dtype);     // UINT32_MAX when tc has no GGUF id for it
// The tc dtype of a ggml type, or -1 when tc has none.
int dtype_of_ggml_type(uint32_t id);

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian u32
inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr size_t kMaxNameBytes = 63;  // ggml: GGML_MAX_NAME = 64 including the NUL
inline constexpr int kMaxDims = 4;

struct KeyValue {
  std::string key;
  uint32_t type = 0;
  uint32_t elem_type = 0;     // arrays only
  uint64_t count = 1;         // array length; 1 for scalars
  uint64_t value_offset = 0;  // file offset of the value bytes
  union {
    uint64_t u;
    int64_t i;
    double f;
  } num{};                                // integer, bool and float scalars
  std::string_view str;                   // STRING (points into the file)
  const uint8_t* array_data = nullptr;    // numeric arrays: packed little-endian elements
  std::vector<std::string_view> strings;  // arrays of STRING
};

struct TensorInfo {
  std::string name;
  uint32_t n_dims = 0;
  int64_t ne[kMaxDims] = {1, 1, 1, 1};
  uint32_t type = 0;
  uint64_t offset = 0;  // relative to the data section
  uint64_t nbytes = 0;
  uint64_t info_offset = 0;  // where its info record starts in the file
};

struct Parsed {
  uint32_t version = 0;
  uint32_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;  // absolute file offset of the data section
  std::vector<KeyValue> kv;
  std::vector<TensorInfo> tensors;
};

// Parses a whole file image. `where` names the file in messages. On failure returns
// TC_ERROR_INVALID_FORMAT with the message set, and *out is unspecified.
tc_status_t parse(const uint8_t* data, size_t size, const std::string& where, Parsed* out);

}  // namespace tc::gguf

// A GGUF file mapped into memory (the C handle tc_gguf_t).
struct tc_gguf {
  std::string path;
  const uint8_t* data = nullptr;
  size_t size = 0;
  tc::gguf::Parsed parsed;
  ~tc_gguf();
};
