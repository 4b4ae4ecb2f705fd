// expect: e18_recursion.ph:3:10: error: recursive call to 'f' (recursion is not allowed) (inlined from e18_recursion.ph:7:10)
fn f(x) {
  return f(x)
}
@grid(1)
kernel k(A: tensor<f32>[M]) {
  A[0] = f(1.0)
}
