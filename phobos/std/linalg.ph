// std/linalg.ph — the matrix-product loops of Phobos, written in Phobos.
//
// Shipped with the compiler and implied in every program (`import std.linalg`). They are
// ordinary fns: each call is inlined with the caller's types, so the tile sizes come from the
// caller (`extent(acc, 0)`, `extent(acc, 1)`), the depth from A (`extent(A, 1)`), and only the
// step BK is passed in. `acc` is passed by reference and updated in place.

// acc += A[m0 :+ BM, :] @ B[:, n0 :+ BN], BK columns of A a step. A [M, K], B [K, N].
fn matmul(acc, A, B, m0, n0, BK) {
  for kt in range(0, extent(A, 1), BK) {
    var a = A[m0 :+ extent(acc, 0), kt :+ BK]
    var b = B[kt :+ BK, n0 :+ extent(acc, 1)]
    acc += dot(a, b)
  }
}

// acc += A[m0 :+ BM, :] @ B[n0 :+ BN, :]^T against a B stored [N, K], as a linear layer's
// weight is: matmul_t(acc, X, W, m0, n0, BK) is torch.nn.functional.linear without the bias.
// (B is [N, K]; the slice of B is [BN, BK] and dot_t contracts over the shared K axis.)
fn matmul_t(acc, A, B, m0, n0, BK) {        // B stored [N, K], as a linear layer's weight
  for kt in range(0, extent(A, 1), BK) {
    var a = A[m0 :+ extent(acc, 0), kt :+ BK]
    var b = B[n0 :+ extent(acc, 1), kt :+ BK]
    acc += dot_t(a, b)
  }
}
