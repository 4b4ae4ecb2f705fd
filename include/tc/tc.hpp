// tc — the C++ API: RAII handles over the C API, typed views, and an exception that carries the
// status and message. Header-only; every call maps to one tc_* function.
#pragma once

#include <tc/tc.h>

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tc {

class Error : public std::runtime_error {
 public:
  Error(tc_status_t status, const std::string& message)
      : std::runtime_error(std::string(tc_status_string(status)) + ": " + message),
        status_(status) {}
  tc_status_t status() const noexcept { return status_; }

 private:
  tc_status_t status_;
};

// Throws tc::Error with tc_last_error_message() when `s` is not TC_SUCCESS.
inline void check(tc_status_t s) {
  if (s != TC_SUCCESS) throw Error(s, tc_last_error_message());
}

template <typename T>
constexpr tc_dtype_t dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return TC_DTYPE_F32;
  else if constexpr (std::is_same_v<T, int8_t>)
    return TC_DTYPE_I8;
  else if constexpr (std::is_same_v<T, int32_t>)
    return TC_DTYPE_I32;
  else
    static_assert(sizeof(T) == 0, "use a raw Buffer for f16/bf16 (no standard C++ type)");
}

class Context {
 public:
  explicit Context(tc_device_t device = TC_DEVICE_AUTO) { check(tc_context_create(&ctx_, device)); }
  ~Context() {
    if (ctx_) tc_context_destroy(ctx_);
  }
  Context(Context&& o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
  Context& operator=(Context&& o) noexcept {
    std::swap(ctx_, o.ctx_);
    return *this;
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  tc_context_t* get() const noexcept { return ctx_; }
  tc_device_info info() const {
    tc_device_info i;
    check(tc_context_device_info(ctx_, &i));
    return i;
  }
  void trim() { check(tc_context_trim(ctx_)); }

 private:
  tc_context_t* ctx_ = nullptr;
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(Context& ctx, size_t bytes) { check(tc_buffer_alloc(ctx.get(), bytes, &buf_)); }
  // Zero-copy on a CPU context when 64-byte aligned (the memory must outlive the buffer).
  static Buffer from_ptr(Context& ctx, void* ptr, size_t bytes) {
    Buffer b;
    check(tc_buffer_from_ptr(ctx.get(), ptr, bytes, &b.buf_));
    return b;
  }
  static Buffer wrap(Context& ctx, void* device_ptr, size_t bytes) {
    Buffer b;
    check(tc_buffer_wrap(ctx.get(), device_ptr, bytes, &b.buf_));
    return b;
  }
  template <typename T>
  static Buffer from(Context& ctx, std::span<const T> host) {
    Buffer b(ctx, host.size_bytes());
    b.write(host);
    return b;
  }
  ~Buffer() {
    if (buf_) tc_buffer_free(buf_);
  }
  Buffer(Buffer&& o) noexcept : buf_(std::exchange(o.buf_, nullptr)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(buf_, o.buf_);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  tc_buffer_t* get() const noexcept { return buf_; }
  size_t size() const noexcept { return tc_buffer_size(buf_); }
  void* data() noexcept { return tc_buffer_data(buf_); }

  template <typename T>
  void write(std::span<const T> src, size_t offset_elems = 0) {
    check(tc_buffer_write(buf_, offset_elems * sizeof(T), src.data(), src.size_bytes()));
  }
  template <typename T>
  void read(std::span<T> dst, size_t offset_elems = 0) const {
    check(tc_buffer_read(buf_, offset_elems * sizeof(T), dst.data(), dst.size_bytes()));
  }
  template <typename T>
  std::vector<T> to_vector() const {
    std::vector<T> v(size() / sizeof(T));
    read(std::span<T>(v));
    return v;
  }
  // A typed host view; empty where the memory is not host-visible (CUDA).
  template <typename T>
  std::span<T> view() noexcept {
    return data() ? std::span<T>(static_cast<T*>(data()), size() / sizeof(T)) : std::span<T>();
  }

 private:
  tc_buffer_t* buf_ = nullptr;
};

class Stream {
 public:
  explicit Stream(Context& ctx) : ctx_(&ctx) { check(tc_stream_create(ctx.get(), &s_)); }
  ~Stream() {
    if (s_) tc_stream_destroy(s_);
  }
  Stream(Stream&& o) noexcept : ctx_(o.ctx_), s_(std::exchange(o.s_, nullptr)) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  tc_stream_t* get() const noexcept { return s_; }
  void sync() { check(tc_stream_sync(s_)); }
  void gemm(const tc_gemm_desc& d, Buffer& A, Buffer& B, Buffer& C) {
    check(tc_gemm_async(ctx_->get(), &d, A.get(), B.get(), C.get(), s_));
  }
  void gemm_batched(const tc_gemm_batched_desc& d, Buffer& A, Buffer& B, Buffer& C) {
    check(tc_gemm_batched_async(ctx_->get(), &d, A.get(), B.get(), C.get(), s_));
  }
  // Y = X dequant(W)^T queued on this stream; w_scales only for I8 weights.
  void gemv_quantized(const tc_quant_matmul_desc& d, Buffer& W, Buffer& X, Buffer& Y,
                      Buffer* w_scales = nullptr) {
    check(tc_gemv_quantized_async(ctx_->get(), &d, W.get(), w_scales ? w_scales->get() : nullptr,
                                  X.get(), Y.get(), s_));
  }
  void gemm_quantized(const tc_quant_matmul_desc& d, Buffer& W, Buffer& X, Buffer& Y,
                      Buffer* w_scales = nullptr) {
    check(tc_gemm_quantized_async(ctx_->get(), &d, W.get(), w_scales ? w_scales->get() : nullptr,
                                  X.get(), Y.get(), s_));
  }

 private:
  Context* ctx_;
  tc_stream_t* s_ = nullptr;
};

// A descriptor for C[M,N] = alpha * op(A) @ op(B) + beta * C with `in` inputs.
inline tc_gemm_desc gemm_desc(int32_t M, int32_t N, int32_t K, tc_dtype_t in = TC_DTYPE_F32,
                              tc_dtype_t out = TC_DTYPE_F32) {
  tc_gemm_desc d{};
  d.M = M, d.N = N, d.K = K;
  d.a_dtype = d.b_dtype = in;
  d.c_dtype = out;
  d.accum_dtype = in == TC_DTYPE_I8 ? TC_DTYPE_I32 : TC_DTYPE_F32;
  d.alpha = 1.0f;
  return d;
}

inline void gemm(Context& ctx, const tc_gemm_desc& d, Buffer& A, Buffer& B, Buffer& C) {
  check(tc_gemm(ctx.get(), &d, A.get(), B.get(), C.get()));
}
inline void gemm_batched(Context& ctx, const tc_gemm_batched_desc& d, Buffer& A, Buffer& B,
                         Buffer& C) {
  check(tc_gemm_batched(ctx.get(), &d, A.get(), B.get(), C.get()));
}

// A descriptor for Y[M,N] = X[M,K] dequant(W[N,K])^T with f32 X and Y; `quantize_activations`
// lets kernels round X to 8 bits (faster; rms error <= 5e-3 instead of <= 1e-4); `flags` are
// TC_QUANT_* bits (TC_QUANT_WEIGHTS_CONSTANT: W is not written while the call is queued).
inline tc_quant_matmul_desc quant_desc(int32_t M, int32_t N, int32_t K, tc_dtype_t w,
                                       bool quantize_activations = false, uint32_t flags = 0) {
  tc_quant_matmul_desc d{};
  d.M = M, d.N = N, d.K = K;
  d.w_dtype = w;
  d.x_dtype = d.y_dtype = TC_DTYPE_F32;
  d.quantize_activations = quantize_activations;
  d.flags = flags;
  return d;
}

inline void gemv_quantized(Context& ctx, const tc_quant_matmul_desc& d, Buffer& W, Buffer& X,
                           Buffer& Y, Buffer* w_scales = nullptr) {
  check(tc_gemv_quantized(ctx.get(), &d, W.get(), w_scales ? w_scales->get() : nullptr, X.get(),
                          Y.get()));
}
inline void gemm_quantized(Context& ctx, const tc_quant_matmul_desc& d, Buffer& W, Buffer& X,
                           Buffer& Y, Buffer* w_scales = nullptr) {
  check(tc_gemm_quantized(ctx.get(), &d, W.get(), w_scales ? w_scales->get() : nullptr, X.get(),
                          Y.get()));
}

inline std::string last_backend() {
  return tc_backend_name(tc_last_backend());
}
inline std::string last_instance() {
  return tc_last_instance();
}

}  // namespace tc
