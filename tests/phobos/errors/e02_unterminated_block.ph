// expect: e02_unterminated_block.ph:4:1: error: expected '}' before end of file
kernel k(A: tensor<f32>[M]) {
  let x = 1
