// emit --target=cpp coverage beyond the GEMMs: reductions over both axes, a slice of a tile,
// a block-dependent if/else, bf16 and i32 casts, integer % and / (cpp_aot_test.cpp).
@grid(cdiv(M, 16))
kernel rowstats(X: tensor<f32>[M, 32], S: tensor<f32>[M, 1], Y: tensor<bf16>[M, 8], Q: tensor<i32>[M, 8]) {
  let r0 = ctx.block.x * 16
  var t: tile<f32>[16, 32] = X[r0 :+ 16, 0 :+ 32]
  let s = sum(t, 1)
  let m = max(t, 0)
  S[r0 :+ 16, 0 :+ 1] = s / 32.0
  let h = t[0 :+ 16, 4 :+ 8]
  if (ctx.block.x % 2 == 0) {
    Y[r0 :+ 16, 0 :+ 8] = bf16(h * 3.0 + m[0 :+ 1, 0 :+ 8])
  } else {
    Y[r0 :+ 16, 0 :+ 8] = bf16(exp(h) - 1.0)
  }
  Q[r0 :+ 16, 0 :+ 8] = i32(h * 100.0) % 7 + i32(h * 100.0) / 3
}
