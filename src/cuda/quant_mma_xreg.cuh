// The f16 MMA decode kernel's variant with X in registers and no pass barriers
// (quant_mma_xreg.cu), reached through launch_mma_f16 (quant_mma_f16.cu), which picks it where
// it fits.
#pragma once

#include "cuda/quant_kernels.h"

namespace tc::cuda::quant {

// True where the X-in-registers kernel serves `a`: K % 256 == 0 and M <= 8 with K <= 12288
// (a 2-CTA cluster above 4096); with TC_QUANT_F16_XREG_MAXM=16 or 32 (A/B, tests; default 8)
// also M <= 16 with K <= 4096 (2 CTAs above 2048) and M <= 32 with K <= 4096 (2 or 4 CTAs above
// 1024). TC_QUANT_F16_XREG=0 (A/B): never (the pass-barrier kernel everywhere).
bool mma_f16_xreg_fits(const Args& a);

// Launches it (no workspace; programmatic dependent launch where a.pdl asks).
tc_status_t launch_mma_f16_xreg(const Args& a, void* stream);

}  // namespace tc::cuda::quant
