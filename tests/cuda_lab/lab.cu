// The CUDA GEMM lab: runs each own kernel instance on fresh random inputs, checks it against a
// float64 CPU reference (all outputs for small problems, a random sample for large ones) and
// against cuBLAS in the same run, then times both with CUDA events (warm-up, then the median
// of batches, inputs rotated over sets larger than L2) and prints TFLOP/s (GB/s of weights
// for decode shapes) and the ratio. Exit status 1 when any check fails.
//   lab [filter]   runs the cases whose name contains `filter`.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "cuda/gemm_kernels.h"
#include "lab_cases.h"

using namespace lab;

namespace {

struct Timing {
  double ms = 0;
  double host_us = 0;  // host time to enqueue one call
  bool ok = false;
};

template <class F>
Timing time_it(F&& f, cudaStream_t s, int sets) {
  cudaEvent_t e0, e1;
  LAB_CHECK(cudaEventCreate(&e0));
  LAB_CHECK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i)
    if (!f(i % sets)) return {};
  LAB_CHECK(cudaStreamSynchronize(s));
  // Batches long enough (>= ~2 ms) that launch gaps do not dominate.
  LAB_CHECK(cudaEventRecord(e0, s));
  f(0);
  LAB_CHECK(cudaEventRecord(e1, s));
  LAB_CHECK(cudaEventSynchronize(e1));
  float one = 0;
  LAB_CHECK(cudaEventElapsedTime(&one, e0, e1));
  const int per = std::clamp(int(2.0 / std::max(one, 1e-3f)), 1, 200);
  std::vector<float> v;
  double host_us = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    LAB_CHECK(cudaEventRecord(e0, s));
    const auto h0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per; ++i) f((rep * per + i) % sets);
    const auto h1 = std::chrono::steady_clock::now();
    host_us = std::min(host_us, std::chrono::duration<double, std::micro>(h1 - h0).count() / per);
    LAB_CHECK(cudaEventRecord(e1, s));
    LAB_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    LAB_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    v.push_back(ms / per);
  }
  std::sort(v.begin(), v.end());
  LAB_CHECK(cudaEventDestroy(e0));
  LAB_CHECK(cudaEventDestroy(e1));
  return {v[v.size() / 2], host_us, true};
}

double rms_scaled(const std::vector<double>& y, const std::vector<double>& r) {
  double num = 0, den = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i])) return INFINITY;
    num += (y[i] - r[i]) * (y[i] - r[i]);
    den += r[i] * r[i];
  }
  return std::sqrt(num) / (std::sqrt(den) + 1e-30);
}

double bound_for(const Case& c) {
  if (c.d.a_dtype == TC_DTYPE_I8) return 0;  // exact
  if (c.d.a_dtype == TC_DTYPE_F32 && c.d.accum_dtype == TC_DTYPE_TF32) return 2e-3;
  switch (c.d.c_dtype) {
    case TC_DTYPE_BF16:
      return 8e-3;
    case TC_DTYPE_F16:
      return 1.5e-3;
    default:
      return c.d.a_dtype == TC_DTYPE_F32 ? 1e-6 : 2e-5;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : "";
  cudaDeviceProp prop{};
  LAB_CHECK(cudaGetDeviceProperties(&prop, 0));
  int drv = 0;
  cudaDriverGetVersion(&drv);
  std::printf("device %s, %d SMs, L2 %d MB, driver API %d\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20, drv);
  tc::cuda::GemmDevice dev;
  dev.sm_count = prop.multiProcessorCount;
  dev.cc_major = prop.major;
  dev.cc_minor = prop.minor;
  dev.smem_optin = prop.sharedMemPerBlockOptin;
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) return 2;
  cudaStream_t stream;
  LAB_CHECK(cudaStreamCreate(&stream));
  int failures = 0;
  std::printf("%-40s %-62s %8s %8s %7s %7s %5s %5s %5s %s\n", "case", "instance", "err_ref",
              "err_blas", "own", "cublas", "ratio", "h_us", "hb_us", "unit");
  for (const Case& c : lab_cases()) {
    if (!std::strstr(c.name.c_str(), filter)) continue;
    unsetenv("TC_WGMMA_EPILOGUE");
    unsetenv("TC_GEMM_PDL");
    unsetenv("TC_WGMMA_PACK128");
    unsetenv("TC_WGMMA_SWAP");
    unsetenv("TC_SKINNY_PERSIST");
    if (const size_t eq = c.env.find('='); eq != std::string::npos)
      setenv(c.env.substr(0, eq).c_str(), c.env.substr(eq + 1).c_str(), 1);
    tc::GemmProblem p0 = c.problem();
    p0.stream = stream;
    // Rotated input sets: enough that one pass over them exceeds twice the L2.
    const size_t bytes_a = c.bytes_a(), bytes_b = c.bytes_b(), bytes_c = c.bytes_c();
    const int sets = c.timed
                         ? int(std::clamp<size_t>(
                               (2 * size_t(prop.l2CacheSize)) / (bytes_a + bytes_b + 1) + 1, 1, 8))
                         : 1;
    std::vector<void*> A(sets), B(sets);
    static uint64_t seed = 12345;
    for (int s = 0; s < sets; ++s) {
      LAB_CHECK(cudaMalloc(&A[s], bytes_a + 16));
      LAB_CHECK(cudaMalloc(&B[s], bytes_b + 16));
      fill_random(static_cast<char*>(A[s]) + c.a_offset, c.d.a_dtype, bytes_a / dsize(c.d.a_dtype),
                  ++seed);
      fill_random(static_cast<char*>(B[s]) + c.b_offset, c.d.b_dtype, bytes_b / dsize(c.d.b_dtype),
                  ++seed);
    }
    void *C, *C0, *Cb, *ws = nullptr;
    LAB_CHECK(cudaMalloc(&C, bytes_c + 16));
    LAB_CHECK(cudaMalloc(&C0, bytes_c + 16));
    LAB_CHECK(cudaMalloc(&Cb, bytes_c + 16));
    fill_random(static_cast<char*>(C0) + c.c_offset, c.d.c_dtype, bytes_c / dsize(c.d.c_dtype),
                ++seed);
    auto with_set = [&](int s, void* cptr) {
      tc::GemmProblem p = p0;
      p.a = static_cast<char*>(A[s]) + c.a_offset;
      p.b = static_cast<char*>(B[s]) + c.b_offset;
      p.c = static_cast<char*>(cptr) + c.c_offset;
      return p;
    };
    // Plans see the real pointers: alignment decides packing. Every set shares the offsets.
    Instance inst;
    std::string why;
    if (!plan_case(c, with_set(0, C), dev, &inst, why)) {
      std::printf("%-44s cannot run: %s\n", c.name.c_str(), why.c_str());
      ++failures;
      continue;
    }
    if (inst.workspace_bytes) LAB_CHECK(cudaMalloc(&ws, inst.workspace_bytes));
    // Correctness: poisoned (beta == 0) or random (beta != 0) C, set 0.
    if (c.d.beta == 0.0f) {
      poison(C, bytes_c + 16);
      poison(Cb, bytes_c + 16);
    } else {
      LAB_CHECK(cudaMemcpy(C, C0, bytes_c + 16, cudaMemcpyDeviceToDevice));
      LAB_CHECK(cudaMemcpy(Cb, C0, bytes_c + 16, cudaMemcpyDeviceToDevice));
    }
    const tc::GemmProblem p = with_set(0, C);
    tc_status_t st = run_case(c, p, inst, ws);
    cudaError_t ke = cudaStreamSynchronize(stream);
    if (st != TC_SUCCESS || ke != cudaSuccess) {
      std::printf("%-44s %-58s launch failed: status %d, %s\n", c.name.c_str(), inst.name.c_str(),
                  int(st), cudaGetErrorString(ke));
      return 1;  // a sticky CUDA error poisons every later case
    }
    const bool blas_ok = cublas_gemm(blas, with_set(0, Cb), static_cast<char*>(Cb) + c.c_offset) ==
                         CUBLAS_STATUS_SUCCESS;
    LAB_CHECK(cudaStreamSynchronize(stream));
    HostMats h;
    h.a.resize(bytes_a);
    h.b.resize(bytes_b);
    h.c0.resize(bytes_c);
    std::vector<char> hc(bytes_c), hcb(bytes_c);
    LAB_CHECK(cudaMemcpy(h.a.data(), p.a, bytes_a, cudaMemcpyDeviceToHost));
    LAB_CHECK(cudaMemcpy(h.b.data(), p.b, bytes_b, cudaMemcpyDeviceToHost));
    LAB_CHECK(cudaMemcpy(h.c0.data(), static_cast<char*>(C0) + c.c_offset, bytes_c,
                         cudaMemcpyDeviceToHost));
    LAB_CHECK(cudaMemcpy(hc.data(), p.c, bytes_c, cudaMemcpyDeviceToHost));
    LAB_CHECK(cudaMemcpy(hcb.data(), static_cast<char*>(Cb) + c.c_offset, bytes_c,
                         cudaMemcpyDeviceToHost));
    // float64 reference on all outputs (small) or 2048 random ones (large).
    const double work = double(c.batch) * c.d.M * c.d.N * c.d.K;
    std::vector<double> y, r, yo, yb;
    std::mt19937_64 rng(seed);
    auto take = [&](int b, int i, int j) {
      const size_t off = size_t(b) * p.stride_c + size_t(i) * c.d.ldc + j;
      y.push_back(to_double(hc.data(), c.d.c_dtype, off));
      r.push_back(ref_at(p, h, b, i, j));
    };
    if (work <= 3e7) {
      for (int b = 0; b < c.batch; ++b)
        for (int i = 0; i < c.d.M; ++i)
          for (int j = 0; j < c.d.N; ++j) take(b, i, j);
    } else {
      for (int t = 0; t < 2048; ++t)
        take(int(rng() % c.batch), int(rng() % c.d.M), int(rng() % c.d.N));
    }
    // Every output element written and equal to cuBLAS within the bound.
    for (int b = 0; b < c.batch; ++b)
      for (int i = 0; i < c.d.M; ++i)
        for (int j = 0; j < c.d.N; ++j) {
          const size_t off = size_t(b) * p.stride_c + size_t(i) * c.d.ldc + j;
          yo.push_back(to_double(hc.data(), c.d.c_dtype, off));
          yb.push_back(to_double(hcb.data(), c.d.c_dtype, off));
        }
    const double e_ref = rms_scaled(y, r);
    const double e_blas = blas_ok ? rms_scaled(yo, yb) : -1;
    const double bound = bound_for(c);
    const bool pass = e_ref <= bound && (!blas_ok || e_blas <= 2 * bound + 1e-6);
    if (!pass) ++failures;
    Timing own, ref;
    if (c.timed) {
      own = time_it([&](int s) { return run_case(c, with_set(s, C), inst, ws) == TC_SUCCESS; },
                    stream, sets);
      if (blas_ok)
        ref = time_it(
            [&](int s) {
              return cublas_gemm(blas, with_set(s, Cb), static_cast<char*>(Cb) + c.c_offset) ==
                     CUBLAS_STATUS_SUCCESS;
            },
            stream, sets);
      LAB_CHECK(cudaGetLastError());
    }
    auto rate = [&](const Timing& t) {
      if (!t.ok) return 0.0;
      return c.decode ? double(c.bytes_b()) / (t.ms * 1e6) : 2.0 * work / (t.ms * 1e9);
    };
    std::printf("%-40s %-62s %8.1e %8.1e %7.1f %7.1f %5.2f %5.1f %5.1f %s%s\n", c.name.c_str(),
                inst.name.c_str(), e_ref, e_blas, rate(own), rate(ref),
                ref.ok ? rate(own) / rate(ref) : 0.0, own.host_us, ref.host_us,
                c.decode ? "GB/s" : "TFLOP/s", pass ? "" : "  FAIL");
    std::fflush(stdout);
    for (int s = 0; s < sets; ++s) {
      cudaFree(A[s]);
      cudaFree(B[s]);
    }
    cudaFree(C);
    cudaFree(C0);
    cudaFree(Cb);
    if (ws) cudaFree(ws);
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
