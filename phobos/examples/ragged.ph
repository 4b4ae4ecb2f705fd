// Ragged-shape variants of the seed kernels.

// sgemm without @aligned: every shape is served, edge elements read as 0 and are not stored.
@autotune(TILE_M in [32, 64], TILE_N in [32, 64], TILE_K in [8, 16], T in [128, 256])
@launch(T)
@pipeline
kernel sgemm_ragged(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N], alpha: f32, beta: f32) {
  let pm = ctx.block.x
  let pn = ctx.block.y
  var acc: tile<f32>[TILE_M, TILE_N] = 0.0
  matmul(acc, A, B, pm * TILE_M, pn * TILE_N, TILE_K)
  let c_old = C[pm * TILE_M :+ TILE_M, pn * TILE_N :+ TILE_N]
  C[pm * TILE_M :+ TILE_M, pn * TILE_N :+ TILE_N] = alpha * acc + beta * c_old
}

// hgemm without @aligned, on tensor cores.
@tensorcore
@autotune(BM in [64], BN in [64], BK in [32])
kernel hgemm_ragged(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  matmul(acc, A, B, m0, n0, BK)
  C[m0 :+ BM, n0 :+ BN] = acc
}
