// Kernels of the Phobos GPU benchmark (phobos_bench, scripts/gpu-check.d/phobos.sh): the seed
// kernels' loops with the larger tiles a big GEMM wants (128-256 wide tiles, BK up to 64,
// 256 threads), the ragged hgemm that serves 1000^3, the linear+GELU layer, and the separate
// bias+GELU pass that the cuBLAS baseline of linear+GELU needs.

@autotune(TILE_M in [128, 64], TILE_N in [128, 64], TILE_K in [8, 16], T in [256])
@launch(T)
@pipeline
@aligned(M = TILE_M, N = TILE_N, K = TILE_K)
kernel sgemm_big(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N], alpha: f32, beta: f32) {
  let pm = ctx.block.x
  let pn = ctx.block.y
  var acc: tile<f32>[TILE_M, TILE_N] = 0.0
  matmul(acc, A, B, pm * TILE_M, pn * TILE_N, TILE_K)
  let c_old = C[pm * TILE_M :+ TILE_M, pn * TILE_N :+ TILE_N]
  C[pm * TILE_M :+ TILE_M, pn * TILE_N :+ TILE_N] = alpha * acc + beta * c_old
}

@tensorcore
@pipeline
@autotune(BM in [128, 256], BN in [128, 256], BK in [32, 64], T in [256, 128])
@launch(T)
@aligned(M = BM, N = BN, K = BK)
kernel hgemm_big(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  matmul(acc, A, B, m0, n0, BK)
  C[m0 :+ BM, n0 :+ BN] = acc
}

// No @aligned: any shape (1000^3 is not a multiple of the tiles).
@tensorcore
@pipeline
@autotune(BM in [64, 128], BN in [64, 128], BK in [32, 64], T in [128, 256])
@launch(T)
kernel hgemm_any(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  matmul(acc, A, B, m0, n0, BK)
  C[m0 :+ BM, n0 :+ BN] = acc
}

@tensorcore
@pipeline
@autotune(BM in [128, 256], BN in [128, 256], BK in [32, 64], T in [256, 128])
@launch(T)
kernel linear_gelu(X: tensor<f16>[M, K], W: tensor<f16>[N, K], bias: tensor<f16>[N], Y: tensor<f16>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  matmul_t(acc, X, W, m0, n0, BK)
  let b = f32(bias[n0 :+ BN])
  Y[m0 :+ BM, n0 :+ BN] = gelu(acc + b)
}

// The baseline's second pass: Y = gelu(Y + bias) over a GEMM's output.
@autotune(BR in [8], BC in [256])
@launch(256)
kernel bias_gelu(Y: tensor<f16>[M, N], bias: tensor<f16>[N]) {
  let r0 = ctx.block.x * BR
  let c0 = ctx.block.y * BC
  let b = f32(bias[c0 :+ BC])
  Y[r0 :+ BR, c0 :+ BC] = gelu(f32(Y[r0 :+ BR, c0 :+ BC]) + b)
}
