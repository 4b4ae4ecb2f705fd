// expect: e15_tile_shape_mismatch.ph:4:30: error: initializing 't': a value of shape [32, 4] does not fit shape [32, 8]
@grid(1)
kernel k(A: tensor<f32>[M, K]) {
  var t: tile<f32>[32, 8] = A[0 :+ 32, 0 :+ 4]
}
