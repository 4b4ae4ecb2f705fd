// expect: e12_pipeline_args.ph:2:1: error: @pipeline takes no arguments
@pipeline(2)
@grid(1)
kernel k(A: tensor<f32>[M]) {
}
