// tc_gguf_writer_*: writes GGUF v3 that ggml's strict reader accepts (spec §2.3): unique keys
// and names, names under 64 bytes, tensor offsets contiguous and aligned in the order added,
// zero padding after the tensor infos and after every tensor.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "gguf/gguf.h"

using tc::fail;
using namespace tc::gguf;

struct tc_gguf_writer {
  struct Kv {
    std::string key;
    uint32_t type;
    std::vector<uint8_t> value;  // encoded as in the file
  };
  struct Tensor {
    std::string name;
    uint32_t type;
    uint32_t n_dims;
    int64_t ne[kMaxDims];
    const void* data;
    uint64_t nbytes;
  };
  std::vector<Kv> kv;
  std::vector<Tensor> tensors;
  uint32_t alignment = kDefaultAlignment;
};

namespace {

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  const size_t at = out.size();
  out.resize(at + s.size());
  if (!s.empty()) std::memcpy(out.data() + at, s.data(), s.size());
}

tc_status_t check_new_key(const tc_gguf_writer_t* w, const char* key) {
  if (key == nullptr) return fail(TC_ERROR_NULL_POINTER, "key is NULL");
  if (*key == '\0') return fail(TC_ERROR_INVALID_VALUE, "key is empty");
  for (const auto& kv : w->kv) {
    if (kv.key == key) return fail(TC_ERROR_INVALID_VALUE, "key '{}' was already added", key);
  }
  return TC_SUCCESS;
}

tc_status_t write_all(std::FILE* f, const void* p, size_t n, const char* path) {
  if (n > 0 && std::fwrite(p, 1, n, f) != n) {
    return fail(TC_ERROR_IO, "writing '{}' failed: {}", path, std::strerror(errno));
  }
  return TC_SUCCESS;
}

uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

tc_status_t write_file(const tc_gguf_writer_t* w, std::FILE* f, const char* path) {
  std::vector<uint8_t> head;
  put<uint32_t>(head, kMagic);
  put<uint32_t>(head, 3);
  put<uint64_t>(head, w->tensors.size());
  put<uint64_t>(head, w->kv.size());
  for (const auto& kv : w->kv) {
    put_string(head, kv.key);
    put<uint32_t>(head, kv.type);
    head.insert(head.end(), kv.value.begin(), kv.value.end());
  }
  uint64_t offset = 0;
  for (const auto& t : w->tensors) {
    put_string(head, t.name);
    put<uint32_t>(head, t.n_dims);
    for (uint32_t d = 0; d < t.n_dims; ++d) put<uint64_t>(head, static_cast<uint64_t>(t.ne[d]));
    put<uint32_t>(head, t.type);
    put<uint64_t>(head, offset);
    offset += align_up(t.nbytes, w->alignment);
  }
  head.resize(align_up(head.size(), w->alignment), 0);
  TC_TRY(write_all(f, head.data(), head.size(), path));
  const std::vector<uint8_t> zeros(w->alignment, 0);
  for (const auto& t : w->tensors) {
    TC_TRY(write_all(f, t.data, t.nbytes, path));
    TC_TRY(write_all(f, zeros.data(), align_up(t.nbytes, w->alignment) - t.nbytes, path));
  }
  return TC_SUCCESS;
}

}  // namespace

extern "C" {

tc_status_t tc_gguf_writer_create(tc_gguf_writer_t** writer) {
  if (writer == nullptr) return fail(TC_ERROR_NULL_POINTER, "writer is NULL");
  *writer = new tc_gguf_writer;
  return TC_SUCCESS;
}

tc_status_t tc_gguf_writer_destroy(tc_gguf_writer_t* writer) {
  delete writer;
  return TC_SUCCESS;
}

tc_status_t tc_gguf_writer_add_kv(tc_gguf_writer_t* w, const char* key, tc_gguf_type_t type,
                                  const void* value, size_t size) {
  if (w == nullptr) return fail(TC_ERROR_NULL_POINTER, "writer is NULL");
  TC_TRY(check_new_key(w, key));
  if (static_cast<uint32_t>(type) >= kValueTypeCount || type == TC_GGUF_ARRAY) {
    return fail(TC_ERROR_INVALID_VALUE,
                "type {} is not a scalar GGUF value type (arrays are copied with "
                "tc_gguf_writer_copy_kv)",
                static_cast<int>(type));
  }
  if (value == nullptr && size > 0) return fail(TC_ERROR_NULL_POINTER, "value is NULL");
  tc_gguf_writer::Kv kv{key, static_cast<uint32_t>(type), {}};
  if (type == TC_GGUF_STRING) {
    put_string(kv.value, std::string_view(static_cast<const char*>(value), size));
  } else {
    const size_t need = value_type_size(type);
    if (size != need) {
      return fail(TC_ERROR_INVALID_VALUE, "size {} does not match the {} bytes of {}", size, need,
                  value_type_name(type));
    }
    const auto* p = static_cast<const uint8_t*>(value);
    if (type == TC_GGUF_BOOL && *p > 1) {
      return fail(TC_ERROR_INVALID_VALUE, "BOOL value {} is not 0 or 1", *p);
    }
    kv.value.assign(p, p + need);
  }
  if (kv.key == "general.alignment") {
    uint32_t a = 0;
    if (type == TC_GGUF_UINT32) std::memcpy(&a, value, 4);
    if (type != TC_GGUF_UINT32 || a == 0 || (a & (a - 1)) != 0) {
      return fail(TC_ERROR_INVALID_VALUE, "general.alignment must be a UINT32 power of two");
    }
    if (!w->tensors.empty()) {
      return fail(TC_ERROR_INVALID_VALUE, "general.alignment must be set before any tensor");
    }
    w->alignment = a;
  }
  w->kv.push_back(std::move(kv));
  return TC_SUCCESS;
}

tc_status_t tc_gguf_writer_copy_kv(tc_gguf_writer_t* w, const tc_gguf_t* file, int64_t index) {
  if (w == nullptr) return fail(TC_ERROR_NULL_POINTER, "writer is NULL");
  if (file == nullptr) return fail(TC_ERROR_NULL_POINTER, "file is NULL");
  if (index < 0 || index >= static_cast<int64_t>(file->parsed.kv.size())) {
    return fail(TC_ERROR_OUT_OF_RANGE, "metadata index {} is outside [0, {})", index,
                file->parsed.kv.size());
  }
  const KeyValue& src = file->parsed.kv[index];
  if (src.type != kArray) {
    const void* p = src.type == kString ? static_cast<const void*>(src.str.data())
                                        : file->data + src.value_offset;
    const size_t n = src.type == kString ? src.str.size() : value_type_size(src.type);
    return tc_gguf_writer_add_kv(w, src.key.c_str(), static_cast<tc_gguf_type_t>(src.type), p, n);
  }
  TC_TRY(check_new_key(w, src.key.c_str()));
  tc_gguf_writer::Kv kv{src.key, kArray, {}};
  put<uint32_t>(kv.value, src.elem_type);
  put<uint64_t>(kv.value, src.count);
  if (src.elem_type == kString) {
    for (std::string_view s : src.strings) put_string(kv.value, s);
  } else {
    kv.value.insert(kv.value.end(), src.array_data,
                    src.array_data + src.count * value_type_size(src.elem_type));
  }
  w->kv.push_back(std::move(kv));
  return TC_SUCCESS;
}

tc_status_t tc_gguf_writer_add_tensor(tc_gguf_writer_t* w, const char* name, uint32_t ggml_type,
                                      int32_t n_dims, const int64_t* ne, const void* data,
                                      size_t nbytes) {
  if (w == nullptr) return fail(TC_ERROR_NULL_POINTER, "writer is NULL");
  if (name == nullptr) return fail(TC_ERROR_NULL_POINTER, "name is NULL");
  if (ne == nullptr) return fail(TC_ERROR_NULL_POINTER, "ne is NULL");
  const size_t len = std::strlen(name);
  if (len == 0 || len > kMaxNameBytes) {
    return fail(TC_ERROR_INVALID_VALUE, "name '{}' has {} bytes (must be 1..{})", name, len,
                kMaxNameBytes);
  }
  for (const auto& t : w->tensors) {
    if (t.name == name) return fail(TC_ERROR_INVALID_VALUE, "tensor '{}' was already added", name);
  }
  const TensorType* tt = tensor_type(ggml_type);
  if (tt == nullptr) return fail(TC_ERROR_INVALID_VALUE, "ggml_type {} is unknown", ggml_type);
  if (n_dims < 1 || n_dims > kMaxDims) {
    return fail(TC_ERROR_INVALID_SHAPE, "n_dims = {} (must be 1..4)", n_dims);
  }
  tc_gguf_writer::Tensor t{name, ggml_type, static_cast<uint32_t>(n_dims), {1, 1, 1, 1}, data, 0};
  for (int d = 0; d < n_dims; ++d) {
    if (ne[d] < 0) return fail(TC_ERROR_INVALID_SHAPE, "ne[{}] = {} is negative", d, ne[d]);
    t.ne[d] = ne[d];
  }
  if (ne[0] % tt->block_elems != 0) {
    return fail(TC_ERROR_INVALID_SHAPE, "ne[0] = {} is not a multiple of the {} block size {}",
                ne[0], tt->name, tt->block_elems);
  }
  uint64_t need = static_cast<uint64_t>(ne[0] / tt->block_elems) * tt->block_bytes;
  for (int d = 1; d < n_dims; ++d) {
    if (__builtin_mul_overflow(need, static_cast<uint64_t>(ne[d]), &need)) {
      return fail(TC_ERROR_INVALID_SHAPE, "the byte size of tensor '{}' overflows", name);
    }
  }
  if (nbytes != need) {
    return fail(TC_ERROR_INVALID_VALUE, "nbytes = {} but a {} tensor of this shape has {}", nbytes,
                tt->name, need);
  }
  if (data == nullptr && nbytes > 0) return fail(TC_ERROR_NULL_POINTER, "data is NULL");
  t.nbytes = nbytes;
  w->tensors.push_back(std::move(t));
  return TC_SUCCESS;
}

tc_status_t tc_gguf_writer_write(tc_gguf_writer_t* w, const char* path) {
  if (w == nullptr) return fail(TC_ERROR_NULL_POINTER, "writer is NULL");
  if (path == nullptr) return fail(TC_ERROR_NULL_POINTER, "path is NULL");
  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return fail(TC_ERROR_IO, "cannot create '{}': {}", path, std::strerror(errno));
  tc_status_t st = write_file(w, f, path);
  if (std::fclose(f) != 0 && st == TC_SUCCESS) {
    st = fail(TC_ERROR_IO, "closing '{}' failed: {}", path, std::strerror(errno));
  }
  if (st != TC_SUCCESS) std::remove(path);
  return st;
}

}  // extern "C"
