// Contexts and streams: the C entry points. A context owns one DeviceImpl; buffers and streams
// keep a pointer to it, and destroying a context that still has live objects is refused.
#include <new>

#include "core/env.h"
#include "core/error.h"
#include "core/internal.h"

namespace {

tc_status_t resolve_device(tc_device_t requested, tc_device_t* out) {
  if (requested != TC_DEVICE_AUTO) {
    *out = requested;
    return TC_SUCCESS;
  }
  if (auto forced = tc::env::backend()) {
    if (*forced == "cpu") {
      *out = TC_DEVICE_CPU;
      return TC_SUCCESS;
    }
    if (*forced == "cuda") {
      *out = TC_DEVICE_CUDA;
      return TC_SUCCESS;
    }
    return tc::fail(TC_ERROR_INVALID_VALUE,
                    "environment variable TC_BACKEND is '{}'; expected 'cpu' or 'cuda'", *forced);
  }
  *out = tc_device_available(TC_DEVICE_CUDA) ? TC_DEVICE_CUDA : TC_DEVICE_CPU;
  return TC_SUCCESS;
}

}  // namespace

extern "C" {

bool tc_device_available(tc_device_t device) {
  switch (device) {
    case TC_DEVICE_AUTO:
    case TC_DEVICE_CPU:
      return true;
    case TC_DEVICE_CUDA:
#ifdef TC_HAVE_CUDA
      return tc::cuda_device_available();
#else
      return false;
#endif
    default:
      return false;
  }
}

tc_status_t tc_context_create(tc_context_t** ctx, tc_device_t device) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (device != TC_DEVICE_AUTO && device != TC_DEVICE_CPU && device != TC_DEVICE_CUDA)
    return tc::fail(TC_ERROR_INVALID_VALUE,
                    "argument device is {}; expected TC_DEVICE_AUTO, "
                    "TC_DEVICE_CPU or TC_DEVICE_CUDA",
                    int(device));
  tc_device_t kind;
  TC_TRY(resolve_device(device, &kind));
  auto c = std::unique_ptr<tc_context>(new (std::nothrow) tc_context);
  if (!c) return tc::fail(TC_ERROR_OUT_OF_MEMORY, "allocating a context failed");
  c->device = kind;
  if (kind == TC_DEVICE_CPU) {
    c->impl = tc::make_cpu_device();
  } else {
#ifdef TC_HAVE_CUDA
    tc_status_t st = TC_SUCCESS;
    c->impl = tc::make_cuda_device(&st);
    if (st != TC_SUCCESS) return st;
#else
    return tc::fail(TC_ERROR_NO_DEVICE,
                    "argument device is TC_DEVICE_CUDA but this build of tc has no CUDA backend");
#endif
  }
  *ctx = c.release();
  return TC_SUCCESS;
}

tc_status_t tc_context_destroy(tc_context_t* ctx) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  int live = ctx->live_objects.load();
  if (live != 0)
    return tc::fail(TC_ERROR_INVALID_VALUE,
                    "argument ctx still has {} live buffers or streams; free them first", live);
  delete ctx;
  return TC_SUCCESS;
}

tc_status_t tc_context_device_info(const tc_context_t* ctx, tc_device_info* info) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (info == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument info is NULL");
  *info = tc_device_info{};
  ctx->impl->fill_info(info);
  return TC_SUCCESS;
}

tc_status_t tc_context_trim(tc_context_t* ctx) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  ctx->impl->trim();
  return TC_SUCCESS;
}

tc_status_t tc_context_memory_stats(const tc_context_t* ctx, uint64_t* live_bytes,
                                    uint64_t* held_bytes, uint64_t* peak_bytes) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  uint64_t live, held, peak;
  ctx->impl->memory_stats(&live, &held, &peak);
  if (live_bytes) *live_bytes = live;
  if (held_bytes) *held_bytes = held;
  if (peak_bytes) *peak_bytes = peak;
  return TC_SUCCESS;
}

tc_status_t tc_stream_create(tc_context_t* ctx, tc_stream_t** stream) {
  if (ctx == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument ctx is NULL");
  if (stream == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument stream is NULL");
  auto s = std::unique_ptr<tc_stream>(new (std::nothrow) tc_stream);
  if (!s) return tc::fail(TC_ERROR_OUT_OF_MEMORY, "allocating a stream failed");
  s->ctx = ctx;
  s->impl = ctx->impl->create_stream();
  if (!s->impl) return tc::fail(TC_ERROR_BACKEND_FAILURE, "the device could not create a stream");
  ctx->live_objects++;
  *stream = s.release();
  return TC_SUCCESS;
}

tc_status_t tc_stream_sync(tc_stream_t* stream) {
  if (stream == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument stream is NULL");
  return stream->impl->sync();
}

tc_status_t tc_stream_enqueue_host(tc_stream_t* stream, tc_host_fn fn, void* user_data) {
  if (stream == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument stream is NULL");
  if (fn == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument fn is NULL");
  return stream->impl->submit_host([fn, user_data] {
    tc::clear_error();
    tc_status_t st = fn(user_data);
    if (st != TC_SUCCESS && *tc_last_error_message() == '\0')
      tc::set_error_message(fmt::format("a host function returned {}", tc_status_string(st)));
    return st;
  });
}

void* tc_stream_native_handle(tc_stream_t* stream) {
  return stream ? stream->impl->native() : nullptr;
}

tc_status_t tc_stream_destroy(tc_stream_t* stream) {
  if (stream == nullptr) return tc::fail(TC_ERROR_NULL_POINTER, "argument stream is NULL");
  // Finish queued work first so nothing runs against a dead stream; its error is returned.
  tc_status_t st = stream->impl->sync();
  stream->ctx->live_objects--;
  delete stream;
  return st;
}

}  // extern "C"
