// Shared by the quantized-matmul tests: random weights in a format (through the public
// quantize/dequantize calls), activations, the float64 reference and a public-API run.
#pragma once

#include <tc/tc.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace tc::quant_test {

struct Context {
  tc_context_t* ctx = nullptr;
  ~Context() {
    if (ctx) tc_context_destroy(ctx);
  }
};

struct Weights {
  tc_dtype_t w;
  std::vector<uint8_t> bytes;
  std::vector<float> scales;  // I8 only
  std::vector<double> deq;    // [N,K] dequantized, float64
};

struct Activations {
  tc_dtype_t x;
  std::vector<float> f;
  std::vector<int8_t> q;
  float x_scale = 0.037f;
  const void* data() const {
    return x == TC_DTYPE_I8 ? static_cast<const void*>(q.data()) : f.data();
  }
  size_t bytes() const { return x == TC_DTYPE_I8 ? q.size() : f.size() * 4; }
};

inline Weights make_weights(tc_dtype_t w, int N, int K, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  Weights out{w, {}, {}, std::vector<double>(size_t(N) * K)};
  if (w == TC_DTYPE_I8) {
    out.bytes.resize(size_t(N) * K);
    out.scales.resize(N);
    for (int n = 0; n < N; ++n) {
      out.scales[n] = 0.01f + 0.001f * n;
      for (int k = 0; k < K; ++k) {
        const auto q = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);  // -128 too
        out.bytes[size_t(n) * K + k] = static_cast<uint8_t>(q);
        out.deq[size_t(n) * K + k] = double(out.scales[n]) * q;
      }
    }
    return out;
  }
  const size_t rb = tc_quant_row_bytes(w, K);
  out.bytes.resize(rb * N);
  if (w == TC_DTYPE_Q6_K) {  // no quantizer: random bytes with a small positive fp16 d
    for (auto& b : out.bytes) b = static_cast<uint8_t>(rng());
    for (size_t blk = 0; blk < out.bytes.size() / 210; ++blk) out.bytes[blk * 210 + 209] = 0x1c;
  } else {
    std::vector<float> wf(size_t(N) * K);
    for (auto& v : wf) v = nd(rng);
    tc_quantize(w, wf.data(), N, K, out.bytes.data(), out.bytes.size());
  }
  std::vector<float> deq(size_t(N) * K);
  tc_dequantize(w, out.bytes.data(), out.bytes.size(), N, K, deq.data());
  for (size_t i = 0; i < deq.size(); ++i) out.deq[i] = deq[i];
  return out;
}

inline Activations make_activations(tc_dtype_t x, int M, int K, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> ud(-1.0f, 1.0f);
  Activations a{x, std::vector<float>(size_t(M) * K), std::vector<int8_t>(size_t(M) * K)};
  for (auto& v : a.f) v = ud(rng);
  for (auto& v : a.q) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  return a;
}

inline std::vector<double> reference(const Weights& w, const Activations& a, int M, int N, int K) {
  std::vector<double> ref(size_t(M) * N);
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int k = 0; k < K; ++k) {
        const size_t i = size_t(m) * K + k;
        const double x = a.x == TC_DTYPE_I8 ? double(a.x_scale) * a.q[i] : double(a.f[i]);
        s += x * w.deq[size_t(n) * K + k];
      }
      ref[size_t(m) * N + n] = s;
    }
  }
  return ref;
}

inline double rms_scaled(const std::vector<float>& y, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    num += (y[i] - ref[i]) * (y[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num) / (std::sqrt(den) + 1e-30);
}

using MatmulFn = tc_status_t (*)(tc_context_t*, const tc_quant_matmul_desc*, tc_buffer_t*,
                                 tc_buffer_t*, tc_buffer_t*, tc_buffer_t*);

// Uploads, runs `fn` with Y poisoned (NaN), downloads Y. Returns the call's status.
inline tc_status_t run_api(tc_context_t* ctx, const tc_quant_matmul_desc& d, const Weights& w,
                           const Activations& a, MatmulFn fn, std::vector<float>* y) {
  tc_buffer_t *W = nullptr, *S = nullptr, *X = nullptr, *Y = nullptr;
  const size_t ybytes = size_t(d.M) * d.N * 4;
  std::vector<float> poison(size_t(d.M) * d.N, std::nanf(""));
  tc_status_t st = tc_buffer_alloc(ctx, w.bytes.size(), &W);
  if (st == TC_SUCCESS) st = tc_buffer_write(W, 0, w.bytes.data(), w.bytes.size());
  if (st == TC_SUCCESS && !w.scales.empty()) st = tc_buffer_alloc(ctx, w.scales.size() * 4, &S);
  if (st == TC_SUCCESS && S) st = tc_buffer_write(S, 0, w.scales.data(), w.scales.size() * 4);
  if (st == TC_SUCCESS) st = tc_buffer_alloc(ctx, a.bytes(), &X);
  if (st == TC_SUCCESS) st = tc_buffer_write(X, 0, a.data(), a.bytes());
  if (st == TC_SUCCESS) st = tc_buffer_alloc(ctx, ybytes, &Y);
  if (st == TC_SUCCESS) st = tc_buffer_write(Y, 0, poison.data(), ybytes);
  if (st == TC_SUCCESS) st = fn(ctx, &d, W, S, X, Y);
  y->assign(size_t(d.M) * d.N, 0.0f);
  if (st == TC_SUCCESS) st = tc_buffer_read(Y, 0, y->data(), ybytes);
  for (tc_buffer_t* b : {W, S, X, Y}) {
    if (b) tc_buffer_free(b);
  }
  return st;
}

// Whether this process may run AVX2 rows (the CPU has it and TC_CPU_ISA does not cap it).
inline bool cpu_has_avx2() {
  tc_context_t* ctx = nullptr;
  tc_device_info info{};
  if (tc_context_create(&ctx, TC_DEVICE_CPU) != TC_SUCCESS) return false;
  tc_context_device_info(ctx, &info);
  tc_context_destroy(ctx);
  const uint32_t need = TC_CPU_AVX2 | TC_CPU_FMA | TC_CPU_F16C;
  return (info.cpu_features & need) == need;
}

}  // namespace tc::quant_test
