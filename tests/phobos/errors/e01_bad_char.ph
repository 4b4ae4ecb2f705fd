// expect: e01_bad_char.ph:3:13: error: unexpected character '#'
kernel k(A: tensor<f32>[M]) {
  let x = 3 # 4
}
