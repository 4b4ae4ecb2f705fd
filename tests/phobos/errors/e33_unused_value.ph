// expect: e33_unused_value.ph:4:3: error: the value of 'exp(...)' is unused
@grid(1)
kernel k(A: tensor<f32>[M]) {
  exp(1.0)
}
