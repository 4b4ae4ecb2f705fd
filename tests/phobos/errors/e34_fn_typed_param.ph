// expect: e34_fn_typed_param.ph:2:7: error: fn parameters are untyped (a fn is inlined with the argument's type); remove the type of 'x'
fn f(x: f32) {
  return x
}
