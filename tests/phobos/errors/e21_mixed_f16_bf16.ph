// expect: e21_mixed_f16_bf16.ph:4:21: error: '+' mixes f16 and bf16; cast one side with f16(), bf16() or f32()
@grid(1)
kernel k(A: tensor<f16>[M], B: tensor<bf16>[M]) {
  let t = A[0 :+ 4] + B[0 :+ 4]
}
