// expect: e26_if_not_bool.ph:4:6: error: an if condition must be a bool scalar, got literal i32
@grid(1)
kernel k(A: tensor<f32>[M]) {
  if 1 { A[0] = 1.0 }
}
