// expect: e11_aligned_not_dim.ph:2:10: error: @aligned names 'Q', which is not a dimension symbol of 'k'
@aligned(Q = 16)
@grid(1)
kernel k(A: tensor<f32>[M]) {
}
