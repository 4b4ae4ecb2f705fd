// expect: std/linalg.ph:10:36: error: a range step must be an integer scalar, got literal f32 (inlined from e29_inlined_error_in_std.ph:5:3)
@grid(1)
kernel k(A: tensor<f32>[M, K], B: tensor<f32>[K, N]) {
  var acc: tile<f32>[16, 16] = 0.0
  matmul(acc, A, B, 0, 0, 2.5)
}
