// expect: e20_assign_to_let.ph:5:3: error: cannot assign to 'x': it is not a var
@grid(1)
kernel k(A: tensor<f32>[M]) {
  let x = 1.0
  x = 2.0
}
