// expect: e28_bad_ctx.ph:4:9: error: unknown context 'ctx.warp': expected ctx.block, ctx.thread or ctx.grid
@grid(1)
kernel k(A: tensor<f32>[M]) {
  A[ctx.warp.x] = 1.0
}
