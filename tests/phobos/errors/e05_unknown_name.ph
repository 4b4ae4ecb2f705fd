// expect: e05_unknown_name.ph:4:13: error: unknown name 'idx'
@grid(1)
kernel k(A: tensor<f32>[M]) {
  let t = A[idx :+ 4]
}
