#include "common/reference.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/dtype.h"

namespace tc::test {

double HostMatrix::get(size_t i) const {
  const uint8_t* p = bytes.data() + i * tc_dtype_size(dtype);
  switch (dtype) {
    case TC_DTYPE_F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case TC_DTYPE_F16:
    case TC_DTYPE_BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return dtype == TC_DTYPE_F16 ? f16_to_f32(h) : bf16_to_f32(h);
    }
    case TC_DTYPE_I8:
      return double(int8_t(*p));
    case TC_DTYPE_I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default:
      return std::nan("");
  }
}

void HostMatrix::set(size_t i, double v) {
  uint8_t* p = bytes.data() + i * tc_dtype_size(dtype);
  switch (dtype) {
    case TC_DTYPE_F32: {
      float f = float(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case TC_DTYPE_F16:
    case TC_DTYPE_BF16: {
      uint16_t h = dtype == TC_DTYPE_F16 ? f32_to_f16(float(v)) : f32_to_bf16(float(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case TC_DTYPE_I8:
      *p = uint8_t(int8_t(v));
      return;
    case TC_DTYPE_I32: {
      int32_t x = int32_t(v);
      std::memcpy(p, &x, 4);
      return;
    }
    default:
      return;
  }
}

HostMatrix make_matrix(tc_dtype_t dtype, size_t elements) {
  return HostMatrix{dtype, std::vector<uint8_t>(elements * tc_dtype_size(dtype))};
}

void fill_random(HostMatrix& m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> i8(-128, 127), i32(-1000, 1000);
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.dtype == TC_DTYPE_I8)
      m.set(i, i8(rng));
    else if (m.dtype == TC_DTYPE_I32)
      m.set(i, i32(rng));
    else
      m.set(i, u(rng));
  }
}

void poison(HostMatrix& m) {
  for (size_t i = 0; i < m.size(); ++i)
    m.set(i,
          m.dtype == TC_DTYPE_I32 ? double(0x7eadbeef) : std::numeric_limits<double>::quiet_NaN());
}

void reference_gemm(const tc_gemm_desc& d, const HostMatrix& A, size_t off_a, const HostMatrix& B,
                    size_t off_b, const HostMatrix& C_in, size_t off_c, std::vector<double>& out) {
  int64_t lda = d.lda ? d.lda : (d.transpose_a ? d.M : d.K);
  int64_t ldb = d.ldb ? d.ldb : (d.transpose_b ? d.K : d.N);
  int64_t ldc = d.ldc ? d.ldc : d.N;
  out.assign(size_t(d.M) * size_t(d.N), 0.0);
  std::vector<double> a(size_t(d.M) * d.K), b(size_t(d.K) * d.N);
  for (int64_t i = 0; i < d.M; ++i)
    for (int64_t k = 0; k < d.K; ++k)
      a[i * d.K + k] = A.get(off_a + (d.transpose_a ? k * lda + i : i * lda + k));
  for (int64_t k = 0; k < d.K; ++k)
    for (int64_t j = 0; j < d.N; ++j)
      b[k * d.N + j] = B.get(off_b + (d.transpose_b ? j * ldb + k : k * ldb + j));
  for (int64_t i = 0; i < d.M; ++i) {
    double* row = &out[i * d.N];
    for (int64_t k = 0; k < d.K; ++k) {
      double av = a[i * d.K + k];
      const double* brow = &b[k * d.N];
      for (int64_t j = 0; j < d.N; ++j) row[j] += av * brow[j];
    }
    for (int64_t j = 0; j < d.N; ++j) {
      double c = row[j] * d.alpha;
      if (d.beta != 0.0f) c += double(d.beta) * C_in.get(off_c + i * ldc + j);
      row[j] = c;
    }
  }
}

double rms_scaled(const HostMatrix& got, size_t off_c, int64_t M, int64_t N, int64_t ldc,
                  const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double y = got.get(off_c + i * ldc + j), r = ref[i * N + j];
      num += (y - r) * (y - r);
      den += r * r;
    }
  return std::sqrt(num) / (std::sqrt(den) + 1e-30);
}

double gemm_tolerance(tc_dtype_t in, tc_dtype_t out) {
  if (in == TC_DTYPE_I8) return 0.0;
  if (in == TC_DTYPE_F32) return 1e-6;
  if (in == TC_DTYPE_F16 || out == TC_DTYPE_F16) return 5e-3;
  return 3e-3;  // bf16
}

}  // namespace tc::test
