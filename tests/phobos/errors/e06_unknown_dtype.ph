// expect: e06_unknown_dtype.ph:3:20: error: unknown element type 'f64' (expected f32, f16, bf16, i32, i8 or bool)
@grid(1)
kernel k(A: tensor<f64>[M]) {
}
