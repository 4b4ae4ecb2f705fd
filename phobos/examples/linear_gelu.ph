// A linear layer with a GELU epilogue: Y = gelu(X W^T + bias), X [M, K], W [N, K] (a linear
// layer's weight), f16 operands, f32 accumulation, f16 output. No @aligned: it serves every
// shape, the edges are predicated. The bias add and GELU run on the accumulator in registers
// before the single store (one launch, Y written once).

@tensorcore
@pipeline
@autotune(BM in [64, 128], BN in [64, 128], BK in [32], T in [128, 256])
@launch(T)
kernel linear_gelu(X: tensor<f16>[M, K], W: tensor<f16>[N, K], bias: tensor<f16>[N], Y: tensor<f16>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  matmul_t(acc, X, W, m0, n0, BK)
  let b = f32(bias[n0 :+ BN])
  Y[m0 :+ BM, n0 :+ BN] = gelu(acc + b)
}
