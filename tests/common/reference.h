// The float64 reference and error metric every numerical test uses.
// rms_scaled = ||y - yref|| / (||yref|| + eps).
#pragma once

#include <tc/tc.h>

#include <cstdint>
#include <random>
#include <vector>

namespace tc::test {

// Host matrix storage in any GEMM dtype, as raw bytes, plus a float64 view.
struct HostMatrix {
  tc_dtype_t dtype;
  std::vector<uint8_t> bytes;
  double get(size_t i) const;    // element i as float64
  void set(size_t i, double v);  // rounds to the dtype
  size_t size() const { return bytes.size() / tc_dtype_size(dtype); }
};

HostMatrix make_matrix(tc_dtype_t dtype, size_t elements);
// Fresh random values: U(-1, 1) for floats, U[-128, 127] for i8, U[-1000, 1000] for i32.
void fill_random(HostMatrix& m, std::mt19937_64& rng);
// Fills with NaN (floats) or 0x7eadbeef (i32): elements a kernel must not read stay poisoned.
void poison(HostMatrix& m);

// C = alpha * op(A) @ op(B) + beta * C in float64, for one batch entry at element offsets.
// beta == 0 ignores C's old values (NaN does not propagate), as BLAS defines.
void reference_gemm(const tc_gemm_desc& d, const HostMatrix& A, size_t off_a, const HostMatrix& B,
                    size_t off_b, const HostMatrix& C_in, size_t off_c, std::vector<double>& out);

// rms_scaled over the M x N block at off_c (ldc) of `got` against `ref` (packed M x N).
double rms_scaled(const HostMatrix& got, size_t off_c, int64_t M, int64_t N, int64_t ldc,
                  const std::vector<double>& ref);

// Largest tolerated rms_scaled for a GEMM with these input/output dtypes.
double gemm_tolerance(tc_dtype_t in, tc_dtype_t out);

}  // namespace tc::test
