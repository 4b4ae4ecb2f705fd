// expect: e07_unknown_attr.ph:2:1: error: unknown attribute '@fast' (expected @autotune, @launch, @grid, @pipeline, @aligned or @tensorcore)
@fast
@grid(1)
kernel k(A: tensor<f32>[M]) {
}
