// expect: e19_wrong_arg_count.ph:5:3: error: 'matmul' takes 6 arguments, got 5
@grid(1)
kernel k(A: tensor<f32>[M, K], B: tensor<f32>[K, N]) {
  var acc: tile<f32>[16, 16] = 0.0
  matmul(acc, A, B, 0, 0)
}
