// expect: e14_slice_len_not_const.ph:4:18: error: a slice length must be a compile-time constant (a literal, an autotune parameter or an extent)
@grid(1)
kernel k(A: tensor<f32>[M], n: i32) {
  let t = A[0 :+ n]
}
