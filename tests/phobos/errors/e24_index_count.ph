// expect: e24_index_count.ph:4:12: error: tensor 'A' has 2 dimensions but is indexed with 1
@grid(1)
kernel k(A: tensor<f32>[M, N]) {
  let t = A[0 :+ 2]
}
