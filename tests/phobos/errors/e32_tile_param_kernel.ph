// expect: e32_tile_param_kernel.ph:3:13: error: kernel parameters are tensors or scalars, not tiles
@grid(1)
kernel k(A: tile<f32>[16]) {
}
