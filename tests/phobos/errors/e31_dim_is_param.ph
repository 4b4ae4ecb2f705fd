// expect: e31_dim_is_param.ph:4:25: error: 'M' is an autotune parameter; a tensor dimension is a symbol bound at launch or a literal
@autotune(M in [16])
@grid(1)
kernel k(A: tensor<f32>[M]) {
}
