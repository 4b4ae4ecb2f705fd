// What a cuBLASLt algorithm is, in words: its configuration read back from the opaque
// cublasLtMatmulAlgo_t. Header-only, so that libtc (instance names, the precision filter of
// gemm_cublaslt_plan.cpp), the benchmark's direct peer and the tests describe an algorithm the
// same way and can tell whether tc ran the algorithm a direct caller gets.
#pragma once

#include <cublasLt.h>
#include <fmt/format.h>
#include <tc/tc.h>

#include <cstdint>
#include <string>

namespace tc::cuda {

struct CublasLtAlgoConfig {
  int32_t id = -1, splitk = 1;
  uint32_t tile = 0, stages = 0, reduction = 0, swizzle = 0, custom = 0;
  uint16_t cluster = 0;
};

inline CublasLtAlgoConfig cublaslt_algo_config(const cublasLtMatmulAlgo_t& algo) {
  CublasLtAlgoConfig c;
  size_t n = 0;
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto* v) {
    cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, v, sizeof *v, &n);
  };
  get(CUBLASLT_ALGO_CONFIG_ID, &c.id);
  get(CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile);
  get(CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages);
  get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c.splitk);
  get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c.reduction);
  get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle);
  get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom);
  get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.cluster);
  return c;
}

// "a66_t20_s8_k1_r0_w0_o0_c0": algorithm id, tile id, stages id, split-K count, reduction
// scheme (cublasLtReductionScheme_t: 1 in place, 2 compute type, 4 output type), CTA swizzle,
// custom option, cluster shape id. Two calls with equal tags run the same kernel configuration.
inline std::string cublaslt_algo_tag(const cublasLtMatmulAlgo_t& algo) {
  const CublasLtAlgoConfig c = cublaslt_algo_config(algo);
  return fmt::format("a{}_t{}_s{}_k{}_r{}_w{}_o{}_c{}", c.id, c.tile, c.stages, c.splitk,
                     c.reduction, c.swizzle, c.custom, c.cluster);
}

// Every reduction scheme is deterministic (in place: counters order the adds; the others: a
// separate pass), but "in place" and "output type" round each split's partial sum to the output
// type. With a 16-bit C that is one more rounding per split, which tc declines (the bf16 bound is
// 3e-3 rms; the output's own rounding is already about 1.6e-3); with f32 or i32 C the output type
// is the compute type, so every scheme is as accurate as the unsplit product.
inline bool cublaslt_algo_precise(const cublasLtMatmulAlgo_t& algo, tc_dtype_t c_dtype) {
  const CublasLtAlgoConfig c = cublaslt_algo_config(algo);
  if (c.splitk <= 1 || c_dtype == TC_DTYPE_F32 || c_dtype == TC_DTYPE_I32) return true;
  return c.reduction == CUBLASLT_REDUCTION_SCHEME_NONE ||
         c.reduction == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
}

}  // namespace tc::cuda
