// libFuzzer target: random GEMM descriptors (batched and not) and buffer sizes through the
// public API on a CPU context. Whatever the bytes, a call must either succeed with every
// touched element inside the buffers (ASan checks that) or fail with a status and a message,
// and never write C when it fails.
#include <tc/tc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

template <typename T>
T take(const uint8_t*& p, size_t& n) {
  T v{};
  size_t k = n < sizeof(T) ? n : sizeof(T);
  std::memcpy(&v, p, k);
  p += k, n -= k;
  return v;
}

// Small dimensions keep a successful GEMM cheap; the raw value still reaches validation.
int32_t dim(int32_t raw) { return (raw & 0x100) ? raw : raw % 67; }

tc_context_t* context() {
  static tc_context_t* ctx = [] {
    tc_context_t* c = nullptr;
    if (tc_context_create(&c, TC_DEVICE_CPU) != TC_SUCCESS) std::abort();
    return c;
  }();
  return ctx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t* p = data;
  size_t n = size;
  tc_gemm_batched_desc bd{};
  tc_gemm_desc& d = bd.base;
  d.M = dim(take<int32_t>(p, n));
  d.N = dim(take<int32_t>(p, n));
  d.K = dim(take<int32_t>(p, n));
  uint8_t types = take<uint8_t>(p, n);
  const tc_dtype_t dt[] = {TC_DTYPE_F32, TC_DTYPE_F16, TC_DTYPE_BF16, TC_DTYPE_I8,
                           TC_DTYPE_I32, TC_DTYPE_TF32, TC_DTYPE_Q4_0, static_cast<tc_dtype_t>(77)};
  d.a_dtype = dt[types & 7];
  d.b_dtype = (types & 0x80) ? dt[(types >> 3) & 7] : d.a_dtype;
  uint8_t ct = take<uint8_t>(p, n);
  d.c_dtype = dt[ct & 7];
  d.accum_dtype = dt[(ct >> 3) & 7];
  uint8_t flags = take<uint8_t>(p, n);
  d.transpose_a = flags & 1, d.transpose_b = flags & 2;
  d.alpha = (flags & 4) ? take<float>(p, n) : 1.0f;
  d.beta = (flags & 8) ? take<float>(p, n) : 0.0f;
  d.lda = take<int16_t>(p, n), d.ldb = take<int16_t>(p, n), d.ldc = take<int16_t>(p, n);
  bd.batch = (flags & 16) ? take<int8_t>(p, n) : 1;
  bd.stride_a = take<int16_t>(p, n), bd.stride_b = take<int16_t>(p, n);
  bd.stride_c = take<int16_t>(p, n);
  size_t sizes[3];
  for (auto& s : sizes) s = 1 + take<uint16_t>(p, n) % 40000;

  tc_context_t* ctx = context();
  tc_buffer_t* buf[3] = {};
  std::vector<uint8_t> before;
  for (int i = 0; i < 3; ++i)
    if (tc_buffer_alloc(ctx, sizes[i], &buf[i]) != TC_SUCCESS) std::abort();
  std::vector<uint8_t> fill(sizes[2], 0x5a);
  tc_buffer_write(buf[2], 0, fill.data(), fill.size());
  for (int i = 0; i < 2; ++i) {
    std::vector<uint8_t> bytes(sizes[i]);
    for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = uint8_t(j * 131 + i);
    tc_buffer_write(buf[i], 0, bytes.data(), bytes.size());
  }
  tc_status_t st = (flags & 16) ? tc_gemm_batched(ctx, &bd, buf[0], buf[1], buf[2])
                                : tc_gemm(ctx, &d, buf[0], buf[1], buf[2]);
  if (st != TC_SUCCESS) {
    if (tc_last_error_message()[0] == '\0') std::abort();  // every failure explains itself
    std::vector<uint8_t> after(sizes[2]);
    tc_buffer_read(buf[2], 0, after.data(), after.size());
    if (after != fill) std::abort();  // a failed call wrote C
  }
  for (auto* b : buf) tc_buffer_free(b);
  return 0;
}
