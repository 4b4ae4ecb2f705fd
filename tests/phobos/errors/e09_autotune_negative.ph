// expect: e09_autotune_negative.ph:2:22: error: autotune candidates must be integer literals
@autotune(BM in [64, -32])
@grid(1)
kernel k(A: tensor<f32>[M]) {
}
