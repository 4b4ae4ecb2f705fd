// tc_gguf_*: a GGUF file mapped read-only with mmap, so tensors are read in place without a
// second copy in host memory. Opening validates the whole file (reader.cpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "gguf/gguf.h"

using tc::fail;
using namespace tc::gguf;

tc_gguf::~tc_gguf() {
  if (data != nullptr && size > 0) munmap(const_cast<uint8_t*>(data), size);
}

namespace {

tc_status_t check_file(const tc_gguf_t* file) {
  return file ? TC_SUCCESS : fail(TC_ERROR_NULL_POINTER, "file is NULL");
}

tc_status_t check_tensor(const tc_gguf_t* file, int64_t index) {
  TC_TRY(check_file(file));
  const auto n = static_cast<int64_t>(file->parsed.tensors.size());
  if (index < 0 || index >= n) {
    return fail(TC_ERROR_OUT_OF_RANGE, "tensor index {} is outside [0, {}) of '{}'", index, n,
                file->path);
  }
  return TC_SUCCESS;
}

tc_status_t check_kv(const tc_gguf_t* file, int64_t index) {
  TC_TRY(check_file(file));
  const auto n = static_cast<int64_t>(file->parsed.kv.size());
  if (index < 0 || index >= n) {
    return fail(TC_ERROR_OUT_OF_RANGE, "metadata index {} is outside [0, {}) of '{}'", index, n,
                file->path);
  }
  return TC_SUCCESS;
}

bool is_int_type(uint32_t t) {
  return t == kU8 || t == kI8 || t == kU16 || t == kI16 || t == kU32 || t == kI32 || t == kU64 ||
         t == kI64 || t == kBool;
}

}  // namespace

extern "C" {

tc_status_t tc_gguf_open(const char* path, tc_gguf_t** out) {
  if (path == nullptr) return fail(TC_ERROR_NULL_POINTER, "path is NULL");
  if (out == nullptr) return fail(TC_ERROR_NULL_POINTER, "file is NULL");
  *out = nullptr;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(TC_ERROR_IO, "cannot open '{}': {}", path, std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(TC_ERROR_IO, "'{}' is not a regular file", path);
  }
  auto file = std::make_unique<tc_gguf>();
  file->path = path;
  file->size = static_cast<size_t>(st.st_size);
  if (file->size > 0) {
    void* p = mmap(nullptr, file->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return fail(TC_ERROR_IO, "cannot map '{}': {}", path, std::strerror(errno));
    }
    file->data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  static const uint8_t kEmpty = 0;
  TC_TRY(parse(file->data ? file->data : &kEmpty, file->size, file->path, &file->parsed));
  *out = file.release();
  return TC_SUCCESS;
}

tc_status_t tc_gguf_close(tc_gguf_t* file) {
  delete file;
  return TC_SUCCESS;
}

tc_status_t tc_gguf_version(const tc_gguf_t* file, uint32_t* version) {
  TC_TRY(check_file(file));
  if (version == nullptr) return fail(TC_ERROR_NULL_POINTER, "version is NULL");
  *version = file->parsed.version;
  return TC_SUCCESS;
}

tc_status_t tc_gguf_tensor_count(const tc_gguf_t* file, int64_t* count) {
  TC_TRY(check_file(file));
  if (count == nullptr) return fail(TC_ERROR_NULL_POINTER, "count is NULL");
  *count = static_cast<int64_t>(file->parsed.tensors.size());
  return TC_SUCCESS;
}

tc_status_t tc_gguf_tensor_info(const tc_gguf_t* file, int64_t index, tc_gguf_tensor_desc* info) {
  TC_TRY(check_tensor(file, index));
  if (info == nullptr) return fail(TC_ERROR_NULL_POINTER, "info is NULL");
  const TensorInfo& t = file->parsed.tensors[index];
  info->name = t.name.c_str();
  info->n_dims = static_cast<int32_t>(t.n_dims);
  for (int d = 0; d < kMaxDims; ++d) info->ne[d] = t.ne[d];
  info->ggml_type = t.type;
  info->type_name = tensor_type(t.type)->name;
  info->dtype = dtype_of_ggml_type(t.type);
  info->file_offset = file->parsed.data_offset + t.offset;
  info->nbytes = t.nbytes;
  return TC_SUCCESS;
}

tc_status_t tc_gguf_find_tensor(const tc_gguf_t* file, const char* name, int64_t* index) {
  TC_TRY(check_file(file));
  if (name == nullptr) return fail(TC_ERROR_NULL_POINTER, "name is NULL");
  if (index == nullptr) return fail(TC_ERROR_NULL_POINTER, "index is NULL");
  const auto& ts = file->parsed.tensors;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].name == name) {
      *index = static_cast<int64_t>(i);
      return TC_SUCCESS;
    }
  }
  return fail(TC_ERROR_INVALID_VALUE, "name '{}' is not a tensor of '{}'", name, file->path);
}

tc_status_t tc_gguf_tensor_data(const tc_gguf_t* file, int64_t index, const void** data) {
  TC_TRY(check_tensor(file, index));
  if (data == nullptr) return fail(TC_ERROR_NULL_POINTER, "data is NULL");
  *data = file->data + file->parsed.data_offset + file->parsed.tensors[index].offset;
  return TC_SUCCESS;
}

tc_status_t tc_gguf_read_tensor(const tc_gguf_t* file, int64_t index, tc_buffer_t* dst,
                                size_t dst_offset) {
  const void* src;
  TC_TRY(tc_gguf_tensor_data(file, index, &src));
  if (dst == nullptr) return fail(TC_ERROR_NULL_POINTER, "dst is NULL");
  return tc_buffer_write(dst, dst_offset, src, file->parsed.tensors[index].nbytes);
}

tc_status_t tc_gguf_kv_count(const tc_gguf_t* file, int64_t* count) {
  TC_TRY(check_file(file));
  if (count == nullptr) return fail(TC_ERROR_NULL_POINTER, "count is NULL");
  *count = static_cast<int64_t>(file->parsed.kv.size());
  return TC_SUCCESS;
}

tc_status_t tc_gguf_find_key(const tc_gguf_t* file, const char* key, int64_t* index) {
  TC_TRY(check_file(file));
  if (key == nullptr) return fail(TC_ERROR_NULL_POINTER, "key is NULL");
  if (index == nullptr) return fail(TC_ERROR_NULL_POINTER, "index is NULL");
  const auto& kv = file->parsed.kv;
  for (size_t i = 0; i < kv.size(); ++i) {
    if (kv[i].key == key) {
      *index = static_cast<int64_t>(i);
      return TC_SUCCESS;
    }
  }
  return fail(TC_ERROR_INVALID_VALUE, "key '{}' is not in '{}'", key, file->path);
}

tc_status_t tc_gguf_kv_info(const tc_gguf_t* file, int64_t index, const char** key,
                            tc_gguf_type_t* type, tc_gguf_type_t* elem_type, uint64_t* count) {
  TC_TRY(check_kv(file, index));
  const KeyValue& kv = file->parsed.kv[index];
  if (key) *key = kv.key.c_str();
  if (type) *type = static_cast<tc_gguf_type_t>(kv.type);
  if (elem_type)
    *elem_type = static_cast<tc_gguf_type_t>(kv.type == kArray ? kv.elem_type : kv.type);
  if (count) *count = kv.count;
  return TC_SUCCESS;
}

tc_status_t tc_gguf_get_int(const tc_gguf_t* file, int64_t index, int64_t* value) {
  TC_TRY(check_kv(file, index));
  if (value == nullptr) return fail(TC_ERROR_NULL_POINTER, "value is NULL");
  const KeyValue& kv = file->parsed.kv[index];
  if (!is_int_type(kv.type)) {
    return fail(TC_ERROR_INVALID_VALUE, "key '{}' has type {}, not an integer", kv.key,
                value_type_name(kv.type));
  }
  const bool is_unsigned =
      kv.type == kU8 || kv.type == kU16 || kv.type == kU32 || kv.type == kU64 || kv.type == kBool;
  if (is_unsigned && kv.num.u > static_cast<uint64_t>(INT64_MAX)) {
    return fail(TC_ERROR_OUT_OF_RANGE, "key '{}' = {} does not fit in int64", kv.key, kv.num.u);
  }
  *value = is_unsigned ? static_cast<int64_t>(kv.num.u) : kv.num.i;
  return TC_SUCCESS;
}

tc_status_t tc_gguf_get_float(const tc_gguf_t* file, int64_t index, double* value) {
  TC_TRY(check_kv(file, index));
  if (value == nullptr) return fail(TC_ERROR_NULL_POINTER, "value is NULL");
  const KeyValue& kv = file->parsed.kv[index];
  if (kv.type != kF32 && kv.type != kF64) {
    return fail(TC_ERROR_INVALID_VALUE, "key '{}' has type {}, not a float", kv.key,
                value_type_name(kv.type));
  }
  *value = kv.num.f;
  return TC_SUCCESS;
}

tc_status_t tc_gguf_get_string(const tc_gguf_t* file, int64_t index, uint64_t i, const char** data,
                               size_t* length) {
  TC_TRY(check_kv(file, index));
  if (data == nullptr || length == nullptr) {
    return fail(TC_ERROR_NULL_POINTER, "{} is NULL", data == nullptr ? "data" : "length");
  }
  const KeyValue& kv = file->parsed.kv[index];
  std::string_view s;
  if (kv.type == kString) {
    s = kv.str;
  } else if (kv.type == kArray && kv.elem_type == kString) {
    if (i >= kv.count) {
      return fail(TC_ERROR_OUT_OF_RANGE, "i = {} is outside the {} strings of '{}'", i, kv.count,
                  kv.key);
    }
    s = kv.strings[i];
  } else {
    return fail(TC_ERROR_INVALID_VALUE, "key '{}' has type {}, not a string", kv.key,
                value_type_name(kv.type));
  }
  *data = s.data();
  *length = s.size();
  return TC_SUCCESS;
}

tc_status_t tc_gguf_get_array_data(const tc_gguf_t* file, int64_t index, const void** data) {
  TC_TRY(check_kv(file, index));
  if (data == nullptr) return fail(TC_ERROR_NULL_POINTER, "data is NULL");
  const KeyValue& kv = file->parsed.kv[index];
  if (kv.type != kArray || kv.elem_type == kString) {
    return fail(TC_ERROR_INVALID_VALUE, "key '{}' is not a numeric array", kv.key);
  }
  *data = kv.array_data;
  return TC_SUCCESS;
}

}  // extern "C"
