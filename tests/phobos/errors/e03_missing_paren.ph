// expect: e03_missing_paren.ph:3:28: error: expected ',' between parameters, found '{'
@grid(1)
kernel k(A: tensor<f32>[M] {
}
