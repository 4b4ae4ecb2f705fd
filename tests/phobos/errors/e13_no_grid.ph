// expect: e13_no_grid.ph:2:8: error: cannot infer the launch grid of 'k' (no store of the form C[ctx.block.x * BM :+ BM, ...]); add @grid(x, y)
kernel k(A: tensor<f32>[M]) {
  A[0] = 1.0
}
