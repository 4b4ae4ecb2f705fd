// expect: e23_rank3_tile.ph:4:12: error: a slice yields a tile, and tiles have 1 or 2 dimensions; this one has 3
@grid(1)
kernel k(A: tensor<f32>[M, N, P]) {
  let t = A[0 :+ 2, 0 :+ 2, 0 :+ 2]
}
