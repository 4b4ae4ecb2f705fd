// expect: e10_launch_domain.ph:2:9: error: @launch: threads per block must be a multiple of 32 in 32..1024, got 100
@launch(100)
@grid(1)
kernel k(A: tensor<f32>[M]) {
}
