// expect: e16_store_shape_mismatch.ph:4:38: error: storing a value of shape [32, 64] into a slice of shape [32, 32]
kernel k(A: tensor<f32>[M, N]) {
  var acc: tile<f32>[32, 64] = 0.0
  A[ctx.block.x * 32 :+ 32, 0 :+ 32] = acc
}
