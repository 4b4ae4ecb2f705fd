#include "gemm_runner.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "core/dtype.h"

namespace tc::cli {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void fill(std::vector<uint8_t>& bytes, tc_dtype_t t, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  size_t n = bytes.size() / tc_dtype_size(t);
  for (size_t i = 0; i < n; ++i) {
    float v = u(rng);
    switch (t) {
      case TC_DTYPE_F32:
        std::memcpy(&bytes[i * 4], &v, 4);
        break;
      case TC_DTYPE_F16: {
        uint16_t h = f32_to_f16(v);
        std::memcpy(&bytes[i * 2], &h, 2);
        break;
      }
      case TC_DTYPE_BF16: {
        uint16_t h = f32_to_bf16(v);
        std::memcpy(&bytes[i * 2], &h, 2);
        break;
      }
      default:
        bytes[i] = uint8_t(int8_t(int(rng() % 256) - 128));
        break;
    }
  }
}

double get(const std::vector<uint8_t>& bytes, tc_dtype_t t, size_t i) {
  switch (t) {
    case TC_DTYPE_F32: {
      float f;
      std::memcpy(&f, &bytes[i * 4], 4);
      return f;
    }
    case TC_DTYPE_F16:
    case TC_DTYPE_BF16: {
      uint16_t h;
      std::memcpy(&h, &bytes[i * 2], 2);
      return t == TC_DTYPE_F16 ? f16_to_f32(h) : bf16_to_f32(h);
    }
    case TC_DTYPE_I32: {
      int32_t v;
      std::memcpy(&v, &bytes[i * 4], 4);
      return v;
    }
    default:
      return double(int8_t(bytes[i]));
  }
}

template <typename F>
double median_time(F&& once, double min_seconds, int min_reps) {
  std::vector<double> times;
  auto start = Clock::now();
  while (int(times.size()) < min_reps || since(start) < min_seconds) {
    auto t0 = Clock::now();
    if (!once()) return -1;
    times.push_back(since(t0));
    if (times.size() >= 1000) break;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

bool parse_dtype(const std::string& name, GemmSpec& s) {
  if (name == "f32")
    s.in = s.out = s.accum = TC_DTYPE_F32;
  else if (name == "tf32")
    s.in = s.out = TC_DTYPE_F32, s.accum = TC_DTYPE_TF32;
  else if (name == "f16")
    s.in = s.out = TC_DTYPE_F16, s.accum = TC_DTYPE_F32;
  else if (name == "bf16")
    s.in = s.out = TC_DTYPE_BF16, s.accum = TC_DTYPE_F32;
  else if (name == "i8")
    s.in = TC_DTYPE_I8, s.out = s.accum = TC_DTYPE_I32;
  else
    return false;
  return true;
}

GemmResult run_gemm(tc_context_t* ctx, const GemmSpec& s, bool check, double min_seconds,
                    int min_reps) {
  GemmResult r;
  const size_t na = size_t(s.M) * s.K * s.batch, nb = size_t(s.K) * s.N * s.batch;
  const size_t nc = size_t(s.M) * s.N * s.batch;
  std::vector<uint8_t> A(na * tc_dtype_size(s.in)), B(nb * tc_dtype_size(s.in));
  std::vector<uint8_t> C(nc * tc_dtype_size(s.out));
  std::mt19937_64 rng(42);
  fill(A, s.in, rng);
  fill(B, s.in, rng);
  tc_buffer_t *a = nullptr, *b = nullptr, *c = nullptr;
  tc_stream_t* stream = nullptr;
  auto cleanup = [&] {
    if (stream) tc_stream_destroy(stream);
    for (auto* x : {a, b, c})
      if (x) tc_buffer_free(x);
  };
  auto fail = [&](tc_status_t st) {
    r.status = st;
    r.error = tc_last_error_message();
    cleanup();
    return r;
  };
  tc_status_t st;
  if ((st = tc_buffer_alloc(ctx, A.size(), &a)) || (st = tc_buffer_alloc(ctx, B.size(), &b)) ||
      (st = tc_buffer_alloc(ctx, C.size(), &c)) || (st = tc_stream_create(ctx, &stream)))
    return fail(st);
  tc_buffer_write(a, 0, A.data(), A.size());
  tc_buffer_write(b, 0, B.data(), B.size());
  tc_gemm_desc d{s.M, s.N, s.K, s.in, s.in, s.out, s.accum, s.ta, s.tb, 1.0f, 0.0f, 0, 0, 0};
  tc_gemm_batched_desc bd{d, s.batch, int64_t(s.M) * s.K, int64_t(s.K) * s.N, int64_t(s.M) * s.N};
  // Warm-up (autotuning, module loads, page faults) stays out of the timing.
  st = s.batch > 1 ? tc_gemm_batched(ctx, &bd, a, b, c) : tc_gemm(ctx, &d, a, b, c);
  if (st) return fail(st);
  r.backend = tc_backend_name(tc_last_backend());
  r.instance = tc_last_instance();
  // Each timed sample queues `inner` GEMMs on a stream so launch gaps amortize on a GPU.
  double flop = 2.0 * s.M * s.N * double(s.K) * s.batch;
  int inner = s.batch > 1 ? 1 : int(std::clamp(2e9 / flop, 1.0, 20.0));
  double t = median_time(
      [&] {
        if (s.batch > 1) return tc_gemm_batched(ctx, &bd, a, b, c) == TC_SUCCESS;
        for (int i = 0; i < inner; ++i)
          if (tc_gemm_async(ctx, &d, a, b, c, stream) != TC_SUCCESS) return false;
        return tc_stream_sync(stream) == TC_SUCCESS;
      },
      min_seconds, min_reps);
  if (t < 0) return fail(TC_ERROR_BACKEND_FAILURE);
  r.seconds = t / inner;
  r.tflops = flop / r.seconds / 1e12;
  if (check) {
    tc_buffer_read(c, 0, C.data(), C.size());
    // float64 over up to 16 sampled rows of the first batch entry (all rows when M <= 16).
    double num = 0, den = 0;
    int rows = std::min(s.M, 16);
    for (int ri = 0; ri < rows; ++ri) {
      int64_t i = s.M <= 16 ? ri : int64_t(rng() % uint64_t(s.M));
      for (int64_t j = 0; j < s.N; ++j) {
        double ref = 0;
        for (int64_t k = 0; k < s.K; ++k)
          ref += get(A, s.in, size_t(s.ta ? k * s.M + i : i * s.K + k)) *
                 get(B, s.in, size_t(s.tb ? j * s.K + k : k * s.N + j));
        double y = get(C, s.out, size_t(i * s.N + j));
        num += (y - ref) * (y - ref);
        den += ref * ref;
      }
    }
    r.rms = std::sqrt(num) / (std::sqrt(den) + 1e-30);
  }
  cleanup();
  return r;
}

double time_openblas_sgemm(const GemmSpec& s, double min_seconds, int min_reps) {
  std::vector<float> A(size_t(s.M) * s.K), B(size_t(s.K) * s.N), C(size_t(s.M) * s.N);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : A) x = u(rng);
  for (auto& x : B) x = u(rng);
  auto once = [&] {
    cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans,
                s.M, s.N, s.K, 1.0f, A.data(), s.ta ? s.M : s.K, B.data(), s.tb ? s.K : s.N, 0.0f,
                C.data(), s.N);
    return true;
  };
  once();
  return median_time(once, min_seconds, min_reps);
}

}  // namespace tc::cli
