// expect: e22_broadcast_mismatch.ph:4:29: error: shapes [4, 8] and [8, 4] do not broadcast in '*'
@grid(1)
kernel k(A: tensor<f32>[M, N]) {
  let t = A[0 :+ 4, 0 :+ 8] * A[0 :+ 8, 0 :+ 4]
}
