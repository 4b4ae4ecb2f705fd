// expect: e25_return_in_kernel.ph:4:3: error: 'return' is not allowed in a kernel
@grid(1)
kernel k(A: tensor<f32>[M]) {
  return
}
