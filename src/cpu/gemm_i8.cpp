// int8 x int8 -> int32 GEMM on the CPU, exact: every product fits in 15 bits and pairs are
// summed in 32 bits, so K up to 2^17 cannot overflow.
//
// Packing: A becomes int16 rows with K rounded up to even; B becomes panels of NR columns
// holding (k, k+1) pairs side by side, so one pmaddwd (AVX2: 8 columns, AVX-512 VNNI vpdpwssd:
// 16 columns) multiplies a broadcast A pair with a B pair vector and adds both products.
// Micro-tile MR=4 rows x NR columns: 4 x 2 accumulators + 2 B vectors + 1 broadcast = 11 of the
// 16 ymm registers. K is blocked by KC=512 (a 16-column B panel block is 32 KB, L1-sized) and
// column panels are spread over the thread pool.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/cpu_features.h"
#include "cpu/gemm.h"
#include "cpu/thread_pool.h"

namespace tc::cpu {
namespace {

constexpr int MR = 4;
constexpr int64_t KC = 512;
constexpr int64_t MC = 256;  // rows of A per L2 block: 256 x 512 int16 = 256 KB

struct Packed {
  int64_t kp;              // K rounded up to even
  int nr;                  // panel width
  std::vector<int16_t> a;  // M x kp
  std::vector<int16_t> b;  // panels: [N/nr][kp/2][nr][2]
};

void pack(const GemmProblem& p, const int8_t* A, const int8_t* B, int nr, Packed& pk) {
  const auto& d = p.d;
  pk.kp = (d.K + 1) & ~int64_t(1);
  pk.nr = nr;
  int64_t panels = (d.N + nr - 1) / nr;
  pk.a.assign(size_t(d.M * pk.kp), 0);
  pk.b.assign(size_t(panels * pk.kp * nr), 0);
  parallel_for(d.M, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t k = 0; k < d.K; ++k)
        pk.a[size_t(i * pk.kp + k)] = d.transpose_a ? A[k * d.lda + i] : A[i * d.lda + k];
  });
  parallel_for(panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t pn = p0; pn < p1; ++pn)
      for (int64_t k = 0; k < d.K; ++k)
        for (int j = 0; j < nr; ++j) {
          int64_t col = pn * nr + j;
          if (col >= d.N) break;
          int8_t v = d.transpose_b ? B[col * d.ldb + k] : B[k * d.ldb + col];
          pk.b[size_t(((pn * pk.kp / 2 + k / 2) * nr + j) * 2 + (k & 1))] = v;
        }
  });
}

// Adds the MR x nr tile `t` (rows valid `mr`, columns valid `nc`) into C.
void merge(int32_t* C, int64_t ldc, const int32_t* t, int nr, int mr, int nc, bool init,
           bool keep_c) {
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < nc; ++j) {
      int32_t& c = C[r * ldc + j];
      c = (init && !keep_c ? 0 : c) + t[r * nr + j];
    }
}

template <typename MicroKernel>
void drive(const GemmProblem& p, int nr, MicroKernel kernel) {
  const auto& d = p.d;
  Packed pk;
  for (int32_t bi = 0; bi < p.batch; ++bi) {
    const int8_t* A = static_cast<const int8_t*>(p.a) + bi * p.stride_a;
    const int8_t* B = static_cast<const int8_t*>(p.b) + bi * p.stride_b;
    int32_t* C = static_cast<int32_t*>(p.c) + bi * p.stride_c;
    pack(p, A, B, nr, pk);
    const bool keep_c = p.d.beta != 0.0f;
    int64_t panels = (d.N + nr - 1) / nr;
    // Loop order k-block, row-block, panel: an MC x KC block of A (256 KB) stays in L2 while
    // the thread's panels stream past it; without the row blocking all of A was re-read from
    // memory once per 16-column panel (8 GB at 4096^3, which halved the rate there).
    parallel_for(panels, 1, [&](int64_t p0, int64_t p1) {
      alignas(64) int32_t tile[MR * 32];
      for (int64_t k0 = 0; k0 < pk.kp; k0 += KC) {
        const int64_t kc = std::min(KC, pk.kp - k0);
        for (int64_t i0 = 0; i0 < d.M; i0 += MC) {
          const int64_t i1 = std::min<int64_t>(d.M, i0 + MC);
          for (int64_t pn = p0; pn < p1; ++pn) {
            const int nc = int(std::min<int64_t>(nr, d.N - pn * nr));
            const int16_t* bp = pk.b.data() + (pn * pk.kp + k0) * nr;
            for (int64_t i = i0; i < i1; i += MR) {
              const int mr = int(std::min<int64_t>(MR, i1 - i));
              kernel(pk.a.data() + i * pk.kp + k0, pk.kp, mr, bp, kc, tile);
              merge(C + i * d.ldc + pn * nr, d.ldc, tile, nr, mr, nc, k0 == 0, keep_c);
            }
          }
        }
      }
    });
  }
}

void micro_scalar(const int16_t* a, int64_t lda, int mr, const int16_t* b, int64_t kc,
                  int32_t* tile) {
  constexpr int nr = 8;
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < nr; ++j) {
      int32_t s = 0;
      for (int64_t k = 0; k < kc; k += 2)
        s += int32_t(a[r * lda + k]) * b[(k / 2 * nr + j) * 2] +
             int32_t(a[r * lda + k + 1]) * b[(k / 2 * nr + j) * 2 + 1];
      tile[r * nr + j] = s;
    }
}

__attribute__((target("avx2"))) void micro_avx2(const int16_t* a, int64_t lda, int mr,
                                                const int16_t* b, int64_t kc, int32_t* tile) {
  constexpr int nr = 16;
  __m256i acc[MR][2];
  for (auto& row : acc) row[0] = row[1] = _mm256_setzero_si256();
  for (int64_t k = 0; k < kc; k += 2) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k * nr));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k * nr + 16));
    for (int r = 0; r < MR; ++r) {
      if (r >= mr) break;
      int32_t pair;
      std::memcpy(&pair, a + r * lda + k, 4);
      const __m256i av = _mm256_set1_epi32(pair);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(av, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(av, b1));
    }
  }
  for (int r = 0; r < mr; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * nr), acc[r][0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tile + r * nr + 8), acc[r][1]);
  }
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void micro_vnni(const int16_t* a,
                                                                       int64_t lda, int mr,
                                                                       const int16_t* b, int64_t kc,
                                                                       int32_t* tile) {
  constexpr int nr = 32;
  __m512i acc[MR][2];
  for (auto& row : acc) row[0] = row[1] = _mm512_setzero_si512();
  for (int64_t k = 0; k < kc; k += 2) {
    const __m512i b0 = _mm512_loadu_si512(b + k * nr);
    const __m512i b1 = _mm512_loadu_si512(b + k * nr + 32);
    for (int r = 0; r < MR; ++r) {
      if (r >= mr) break;
      int32_t pair;
      std::memcpy(&pair, a + r * lda + k, 4);
      const __m512i av = _mm512_set1_epi32(pair);
      acc[r][0] = _mm512_dpwssd_epi32(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpwssd_epi32(acc[r][1], av, b1);
    }
  }
  for (int r = 0; r < mr; ++r) {
    _mm512_store_si512(tile + r * nr, acc[r][0]);
    _mm512_store_si512(tile + r * nr + 16, acc[r][1]);
  }
}

bool is_i8(const GemmProblem& p, std::string& why) {
  if (p.d.a_dtype == TC_DTYPE_I8) return true;
  why = "inputs are not i8";
  return false;
}

}  // namespace

bool i8_avx512vnni_can_run(const GemmProblem& p, std::string& why) {
  if (!is_i8(p, why)) return false;
  if (!has(TC_CPU_AVX512F | TC_CPU_AVX512BW | TC_CPU_AVX512VNNI)) {
    why = "CPU lacks AVX-512 VNNI";
    return false;
  }
  return true;
}
tc_status_t i8_avx512vnni_run(const GemmProblem& p) {
  drive(p, 32, micro_vnni);
  return TC_SUCCESS;
}

bool i8_avx2_can_run(const GemmProblem& p, std::string& why) {
  if (!is_i8(p, why)) return false;
  if (!has(TC_CPU_AVX2)) {
    why = "CPU lacks AVX2";
    return false;
  }
  return true;
}
tc_status_t i8_avx2_run(const GemmProblem& p) {
  drive(p, 16, micro_avx2);
  return TC_SUCCESS;
}

bool i8_scalar_can_run(const GemmProblem& p, std::string& why) {
  return is_i8(p, why);
}
tc_status_t i8_scalar_run(const GemmProblem& p) {
  drive(p, 8, micro_scalar);
  return TC_SUCCESS;
}

}  // namespace tc::cpu
