// expect: e27_dup_param.ph:3:29: error: parameter 'A' is given twice
@grid(1)
kernel k(A: tensor<f32>[M], A: f32) {
}
