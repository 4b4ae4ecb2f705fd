// The GGUF parser. Every read goes through Cursor, which checks the remaining length first, and
// every count is bounded by the bytes left before anything is allocated, so a malformed or
// hostile file yields a located message (never an out-of-bounds read or a huge allocation).
// Rules are at least as strict as ggml's reader (spec §2.3), including contiguous offsets.
#include <cstring>
#include <unordered_map>

#include "core/error.h"
#include "gguf/gguf.h"

namespace tc::gguf {
namespace {

// Smallest encodings, used to bound counts: a KV is an empty-key length, a type and a 1-byte
// value; a tensor info is a name length, n_dims, one dim, a type and an offset.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, const std::string& where)
      : data_(data), size_(size), where_(where) {}

  size_t pos() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }

  template <typename... Args>
  tc_status_t error(uint64_t at, fmt::format_string<Args...> format, Args&&... args) const {
    return fail(TC_ERROR_INVALID_FORMAT, "gguf file '{}': byte offset {}: {}", where_, at,
                fmt::format(format, std::forward<Args>(args)...));
  }

  tc_status_t take(uint64_t bytes, std::string_view what, const uint8_t** p) {
    if (bytes > remaining()) {
      return error(pos_, "{} needs {} bytes but the file ends at byte {}", what, bytes, size_);
    }
    *p = data_ + pos_;
    pos_ += bytes;
    return TC_SUCCESS;
  }

  template <typename T>
  tc_status_t read(T* v, std::string_view what) {
    const uint8_t* p = nullptr;
    TC_TRY(take(sizeof(T), what, &p));
    std::memcpy(v, p, sizeof(T));  // files are little-endian, as is every host tc supports
    return TC_SUCCESS;
  }

  tc_status_t read_string(std::string_view* s, std::string_view what) {
    const size_t at = pos_;
    uint64_t len = 0;
    TC_TRY(read(&len, what));
    if (len > remaining()) {
      return error(at, "{} has length {} but only {} bytes remain in the file", what, len,
                   remaining());
    }
    const uint8_t* p = nullptr;
    TC_TRY(take(len, what, &p));
    *s = std::string_view(reinterpret_cast<const char*>(p), len);
    return TC_SUCCESS;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& where_;
};

uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

tc_status_t read_header(Cursor& c, Parsed* out, uint64_t* n_tensors, uint64_t* n_kv) {
  uint32_t magic = 0;
  TC_TRY(c.read(&magic, "the magic"));
  if (magic != kMagic) {
    return c.error(0, "bad magic 0x{:08x} (a GGUF file starts with the bytes 'GGUF')", magic);
  }
  TC_TRY(c.read(&out->version, "the version"));
  if (out->version != 0 && (out->version & 0xffff) == 0) {
    return c.error(4, "version 0x{:08x} looks byte-swapped; big-endian GGUF is not supported",
                   out->version);
  }
  if (out->version != 2 && out->version != 3) {
    return c.error(4, "unsupported version {} (this reader accepts 2 and 3)", out->version);
  }
  TC_TRY(c.read(n_tensors, "the tensor count"));
  TC_TRY(c.read(n_kv, "the metadata count"));
  if (*n_kv > c.remaining() / kMinKvBytes) {
    return c.error(16, "metadata count {} cannot fit in the {} bytes that follow", *n_kv,
                   c.remaining());
  }
  if (*n_tensors > c.remaining() / kMinTensorInfoBytes) {
    return c.error(8, "tensor count {} cannot fit in the {} bytes that follow", *n_tensors,
                   c.remaining());
  }
  return TC_SUCCESS;
}

tc_status_t read_scalar(Cursor& c, uint32_t type, KeyValue* kv, const std::string& what) {
  const size_t at = c.pos();
  const uint8_t* p = nullptr;
  TC_TRY(c.take(value_type_size(type), what, &p));
  switch (type) {
    case kU8:
      kv->num.u = p[0];
      break;
    case kI8:
      kv->num.i = static_cast<int8_t>(p[0]);
      break;
    case kU16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      kv->num.u = v;
      break;
    }
    case kI16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      kv->num.i = v;
      break;
    }
    case kU32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      kv->num.u = v;
      break;
    }
    case kI32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      kv->num.i = v;
      break;
    }
    case kF32: {
      float v;
      std::memcpy(&v, p, 4);
      kv->num.f = v;
      break;
    }
    case kU64:
      std::memcpy(&kv->num.u, p, 8);
      break;
    case kI64:
      std::memcpy(&kv->num.i, p, 8);
      break;
    case kF64:
      std::memcpy(&kv->num.f, p, 8);
      break;
    case kBool:
      if (p[0] > 1)
        return c.error(at, "{} is a BOOL with byte value {} (must be 0 or 1)", what, p[0]);
      kv->num.u = p[0];
      break;
    default:
      return c.error(at, "{} has unknown value type {}", what, type);
  }
  return TC_SUCCESS;
}

tc_status_t read_array(Cursor& c, KeyValue* kv, const std::string& what) {
  const size_t at = c.pos();
  TC_TRY(c.read(&kv->elem_type, what + " (array element type)"));
  if (kv->elem_type >= kValueTypeCount) {
    return c.error(at, "{} is an array of unknown value type {}", what, kv->elem_type);
  }
  if (kv->elem_type == kArray) return c.error(at, "{} is an array of arrays (not supported)", what);
  TC_TRY(c.read(&kv->count, what + " (array length)"));
  if (kv->elem_type == kString) {
    if (kv->count > c.remaining() / 8) {
      return c.error(at + 4, "{} claims {} strings but only {} bytes remain", what, kv->count,
                     c.remaining());
    }
    kv->strings.resize(kv->count);
    for (uint64_t j = 0; j < kv->count; ++j) {
      TC_TRY(c.read_string(&kv->strings[j], fmt::format("element {} of {}", j, what)));
    }
    return TC_SUCCESS;
  }
  const size_t esize = value_type_size(kv->elem_type);
  if (kv->count > c.remaining() / esize) {
    return c.error(at + 4, "{} claims {} elements of {} bytes but only {} bytes remain", what,
                   kv->count, esize, c.remaining());
  }
  TC_TRY(c.take(kv->count * esize, what, &kv->array_data));
  if (kv->elem_type == kBool) {
    for (uint64_t j = 0; j < kv->count; ++j) {
      if (kv->array_data[j] > 1) {
        return c.error(at + 12 + j, "element {} of {} is a BOOL with byte value {}", j, what,
                       kv->array_data[j]);
      }
    }
  }
  return TC_SUCCESS;
}

tc_status_t read_kvs(Cursor& c, uint64_t n_kv, Parsed* out) {
  std::unordered_map<std::string_view, size_t> seen;
  out->kv.resize(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    KeyValue& kv = out->kv[i];
    const size_t at = c.pos();
    std::string_view key;
    TC_TRY(c.read_string(&key, fmt::format("the key of metadata entry {}", i)));
    if (key.empty()) return c.error(at, "metadata entry {} has an empty key", i);
    if (auto it = seen.find(key); it != seen.end()) {
      return c.error(at, "duplicate key '{}' (entry {} has it too)", key, it->second);
    }
    seen.emplace(key, i);
    kv.key = std::string(key);
    const std::string what = fmt::format("metadata entry {} ('{}')", i, key);
    const size_t type_at = c.pos();
    TC_TRY(c.read(&kv.type, what + " (value type)"));
    if (kv.type >= kValueTypeCount) {
      return c.error(type_at, "{} has unknown value type {}", what, kv.type);
    }
    kv.value_offset = c.pos();
    if (kv.type == kString) {
      TC_TRY(c.read_string(&kv.str, what));
    } else if (kv.type == kArray) {
      TC_TRY(read_array(c, &kv, what));
    } else {
      TC_TRY(read_scalar(c, kv.type, &kv, what));
    }
    if (kv.key == "general.alignment") {
      if (kv.type != kU32) {
        return c.error(type_at, "general.alignment has type {} (must be UINT32)",
                       value_type_name(kv.type));
      }
      if (kv.num.u == 0 || (kv.num.u & (kv.num.u - 1)) != 0) {
        return c.error(kv.value_offset, "general.alignment = {} is not a power of two", kv.num.u);
      }
      out->alignment = static_cast<uint32_t>(kv.num.u);
    }
  }
  return TC_SUCCESS;
}

tc_status_t read_tensor_info(Cursor& c, uint64_t i, uint64_t* expected_offset, Parsed* out,
                             std::unordered_map<std::string_view, size_t>& seen) {
  TensorInfo& t = out->tensors[i];
  t.info_offset = c.pos();
  std::string_view name;
  TC_TRY(c.read_string(&name, fmt::format("the name of tensor {}", i)));
  if (name.size() > kMaxNameBytes) {
    return c.error(t.info_offset, "tensor {} has a {}-byte name (at most {})", i, name.size(),
                   kMaxNameBytes);
  }
  if (auto it = seen.find(name); it != seen.end()) {
    return c.error(t.info_offset, "duplicate tensor name '{}' (tensor {} has it too)", name,
                   it->second);
  }
  seen.emplace(name, i);
  t.name = std::string(name);
  const std::string what = fmt::format("tensor {} ('{}')", i, name);
  size_t at = c.pos();
  TC_TRY(c.read(&t.n_dims, what + " (n_dims)"));
  if (t.n_dims < 1 || t.n_dims > kMaxDims) {
    return c.error(at, "{} has n_dims = {} (must be 1..{})", what, t.n_dims, kMaxDims);
  }
  int64_t elements = 1;
  for (uint32_t d = 0; d < t.n_dims; ++d) {
    at = c.pos();
    uint64_t ne = 0;
    TC_TRY(c.read(&ne, what + " (dims)"));
    if (ne > static_cast<uint64_t>(INT64_MAX)) {
      return c.error(at, "{} has ne[{}] = {}, negative as int64", what, d,
                     static_cast<int64_t>(ne));
    }
    t.ne[d] = static_cast<int64_t>(ne);
    if (__builtin_mul_overflow(elements, t.ne[d], &elements)) {
      return c.error(at, "{} element count overflows int64 at ne[{}] = {}", what, d, ne);
    }
  }
  at = c.pos();
  TC_TRY(c.read(&t.type, what + " (type)"));
  const TensorType* tt = tensor_type(t.type);
  if (tt == nullptr) return c.error(at, "{} has unknown or retired ggml type id {}", what, t.type);
  if (t.ne[0] % tt->block_elems != 0) {
    return c.error(at, "{} has ne[0] = {}, not a multiple of the {} block size {}", what, t.ne[0],
                   tt->name, tt->block_elems);
  }
  uint64_t nbytes = static_cast<uint64_t>(t.ne[0] / tt->block_elems) * tt->block_bytes;
  for (uint32_t d = 1; d < t.n_dims; ++d) {
    if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(t.ne[d]), &nbytes)) {
      return c.error(t.info_offset, "{} byte size overflows 64 bits", what);
    }
  }
  t.nbytes = nbytes;
  at = c.pos();
  TC_TRY(c.read(&t.offset, what + " (data offset)"));
  if (t.offset % out->alignment != 0) {
    return c.error(at, "{} has data offset {}, not a multiple of the alignment {}", what, t.offset,
                   out->alignment);
  }
  if (t.offset != *expected_offset) {
    return c.error(at, "{} has data offset {}, expected {} (tensor data must be contiguous)", what,
                   t.offset, *expected_offset);
  }
  const uint64_t padded = align_up(nbytes, out->alignment);
  if (padded < nbytes || __builtin_add_overflow(*expected_offset, padded, expected_offset)) {
    return c.error(t.info_offset, "{} data end overflows 64 bits", what);
  }
  return TC_SUCCESS;
}

}  // namespace

tc_status_t parse(const uint8_t* data, size_t size, const std::string& where, Parsed* out) {
  *out = Parsed{};
  Cursor c(data, size, where);
  uint64_t n_tensors = 0, n_kv = 0;
  TC_TRY(read_header(c, out, &n_tensors, &n_kv));
  TC_TRY(read_kvs(c, n_kv, out));
  if (n_tensors > c.remaining() / kMinTensorInfoBytes) {
    return c.error(8, "tensor count {} cannot fit in the {} bytes left after the metadata",
                   n_tensors, c.remaining());
  }
  out->tensors.resize(n_tensors);
  std::unordered_map<std::string_view, size_t> seen;
  uint64_t expected = 0;
  for (uint64_t i = 0; i < n_tensors; ++i) TC_TRY(read_tensor_info(c, i, &expected, out, seen));
  out->data_offset = align_up(c.pos(), out->alignment);
  if (n_tensors > 0 && out->data_offset > size) {
    return c.error(c.pos(),
                   "the data section starts at byte {} (aligned to {}), past the end of "
                   "the file ({} bytes)",
                   out->data_offset, out->alignment, size);
  }
  const uint64_t data_bytes = size > out->data_offset ? size - out->data_offset : 0;
  for (const TensorInfo& t : out->tensors) {
    if (t.offset + t.nbytes > data_bytes) {  // no overflow: the offsets' running sum was checked
      return c.error(t.info_offset,
                     "tensor '{}' data [{}, {}) runs past the end of the file ({} bytes)", t.name,
                     out->data_offset + t.offset, out->data_offset + t.offset + t.nbytes, size);
    }
  }
  return TC_SUCCESS;
}

}  // namespace tc::gguf
