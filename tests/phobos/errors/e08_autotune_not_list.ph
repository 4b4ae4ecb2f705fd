// expect: e08_autotune_not_list.ph:2:11: error: @autotune arguments are written 'NAME in [v1, v2, ...]'
@autotune(BM = 64)
@grid(1)
kernel k(A: tensor<f32>[M]) {
}
