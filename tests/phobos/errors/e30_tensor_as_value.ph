// expect: e30_tensor_as_value.ph:4:11: error: tensor 'A' is not a value here; read a slice of it, e.g. A[i :+ n, j :+ m]
@grid(1)
kernel k(A: tensor<f32>[M]) {
  let x = A + 1.0
}
