// expect: e04_bad_slice_colon.ph:4:15: error: slices are written 'start :+ length' (or ':' alone)
@grid(1)
kernel k(A: tensor<f32>[M, K]) {
  let t = A[0 : 4, 0 :+ 4]
}
