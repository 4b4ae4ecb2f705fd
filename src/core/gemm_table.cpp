// The GEMM dispatch table: the whole fallback ladder, in order. A call takes the first row of
// its context's device whose can_run accepts it (an autotune winner for the shape class takes
// precedence on CUDA). Adding a kernel is adding a row here.
#include "core/dispatch.h"
#include "cpu/gemm.h"
#ifdef TC_HAVE_CUDA
#include "cuda/gemm_rows.h"
#endif

namespace tc {

std::span<const GemmRow> gemm_table() {
  static const GemmRow rows[] = {
#ifdef TC_HAVE_CUDA
      TC_CUDA_GEMM_ROWS
#endif
      // CPU
      {TC_BACKEND_OPENBLAS, "gemm_openblas_sgemm", cpu::sgemm_can_run, cpu::sgemm_run},
      {TC_BACKEND_OPENBLAS, "gemm_cpu_half_to_f32_openblas_sgemm", cpu::half_can_run,
       cpu::half_run},
      {TC_BACKEND_CPU, "gemm_cpu_i8_i32_avx512vnni", cpu::i8_avx512vnni_can_run,
       cpu::i8_avx512vnni_run},
      {TC_BACKEND_CPU, "gemm_cpu_i8_i32_avx2", cpu::i8_avx2_can_run, cpu::i8_avx2_run},
      {TC_BACKEND_CPU, "gemm_cpu_i8_i32_scalar", cpu::i8_scalar_can_run, cpu::i8_scalar_run},
  };
  return rows;
}

}  // namespace tc
