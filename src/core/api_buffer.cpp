// Buffers: memory of one context's device. On the CPU the device pointer is the host pointer.
#include <cstdint>
#include <new>

#include "core/error.h"
#include "core/internal.h"

namespace {

constexpr uintptr_t kZeroCopyAlign = 64;

tc_status_t new_buffer(tc_context* ctx, void* ptr, size_t bytes, bool owned, tc_buffer_t** out) {
  auto* b = new (std::nothrow) tc_buffer;
  if (b == nullptr) {
    if (owned) ctx->impl->release(ptr);
    return tc::fail(TC_ERROR_OUT_OF_MEMORY, "allocating a buffer handle failed");
  }
  b->ctx = ctx;
  b->ptr = ptr;
  b->bytes = bytes;
  b->owned = owned;
  ctx->live_objects++;
  *out = b;
  return TC_SUCCESS;
}

tc_status_t check_range(const tc_buffer_t* buf, size_t offset, size_t bytes, const char* fn) {
  if (offset > buf->bytes || bytes > buf->bytes - offset)
    return tc::fail(TC_ERROR_OUT_OF_RANGE,
                    "{}: offset {} + bytes {} reaches past the end of a buffer of {} bytes", fn,
                    offset, bytes, buf->bytes);
  return TC_SUCCESS;
}

}  // namespace

extern "C" {

tc_status_t tc_buffer_alloc(tc_context_t* ctx, size_t bytes, tc_buffer_t** buf) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (buf == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument buf is NULL");
  if (bytes == 0) return tc::fail(TC_ERROR_INVALID_VALUE, "argument bytes is 0");
  void* ptr = nullptr;
  TC_TRY(ctx->impl->alloc(bytes, &ptr));
  return new_buffer(ctx, ptr, bytes, true, buf);
}

tc_status_t tc_buffer_from_ptr(tc_context_t* ctx, void* ptr, size_t bytes, tc_buffer_t** buf) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (ptr == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ptr is NULL");
  if (buf == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument buf is NULL");
  if (bytes == 0) return tc::fail(TC_ERROR_INVALID_VALUE, "argument bytes is 0");
  if (ctx->impl->host_visible() && reinterpret_cast<uintptr_t>(ptr) % kZeroCopyAlign == 0)
    return new_buffer(ctx, ptr, bytes, false, buf);
  void* dev = nullptr;
  TC_TRY(ctx->impl->alloc(bytes, &dev));
  tc_status_t st = ctx->impl->upload(dev, ptr, bytes);
  if (st != TC_SUCCESS) {
    ctx->impl->release(dev);
    return st;
  }
  return new_buffer(ctx, dev, bytes, true, buf);
}

tc_status_t tc_buffer_wrap(tc_context_t* ctx, void* device_ptr, size_t bytes, tc_buffer_t** buf) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (device_ptr == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument device_ptr is NULL");
  if (buf == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument buf is NULL");
  if (bytes == 0) return tc::fail(TC_ERROR_INVALID_VALUE, "argument bytes is 0");
  return new_buffer(ctx, device_ptr, bytes, false, buf);
}

tc_status_t tc_buffer_write(tc_buffer_t* buf, size_t offset, const void* src, size_t bytes) {
  if (buf == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument buf is NULL");
  if (src == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument src is NULL");
  TC_TRY(check_range(buf, offset, bytes, "tc_buffer_write"));
  if (bytes == 0) return TC_SUCCESS;
  return buf->ctx->impl->upload(static_cast<char*>(buf->ptr) + offset, src, bytes);
}

tc_status_t tc_buffer_read(const tc_buffer_t* buf, size_t offset, void* dst, size_t bytes) {
  if (buf == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument buf is NULL");
  if (dst == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument dst is NULL");
  TC_TRY(check_range(buf, offset, bytes, "tc_buffer_read"));
  if (bytes == 0) return TC_SUCCESS;
  return buf->ctx->impl->download(dst, static_cast<const char*>(buf->ptr) + offset, bytes);
}

void* tc_buffer_data(tc_buffer_t* buf) {
  if (buf == nullptr || !buf->ctx->impl->host_visible()) return nullptr;
  return buf->ptr;
}

void* tc_buffer_device_ptr(tc_buffer_t* buf) {
  return buf ? buf->ptr : nullptr;
}

size_t tc_buffer_size(const tc_buffer_t* buf) {
  return buf ? buf->bytes : 0;
}

tc_status_t tc_buffer_free(tc_buffer_t* buf) {
  if (buf == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument buf is NULL");
  if (buf->owned) buf->ctx->impl->release(buf->ptr);
  buf->ctx->live_objects--;
  delete buf;
  return TC_SUCCESS;
}

}  // extern "C"
