// expect: e17_dot_inner_mismatch.ph:7:10: error: 'dot': inner extents differ: [16, 8] @ [4, 16]
@grid(1)
kernel k(A: tensor<f32>[M, K]) {
  var acc: tile<f32>[16, 16] = 0.0
  let a = A[0 :+ 16, 0 :+ 8]
  let b = A[0 :+ 4, 0 :+ 16]
  acc += dot(a, b)
}
