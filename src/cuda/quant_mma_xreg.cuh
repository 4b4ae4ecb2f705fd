// The f16 MMA decode kernel's variant for M <= 8 and K <= 4096 (quant_mma_xreg.cu), reached
// through launch_mma_f16 (quant_mma_f16.cu), which picks it where it fits.
#pragma once

#include "cuda/quant_kernels.h"

namespace tc::cuda::quant {

// True where the X-in-registers kernel serves `a`: M 1..8, K % 256 == 0, K <= 4096, the ring
// fits, and TC_QUANT_F16_XREG is not "0" (the A/B knob: 0 selects the pass-barrier kernel).
bool mma_f16_xreg_fits(const Args& a);

// Launches it (no workspace; programmatic dependent launch where a.pdl asks).
tc_status_t launch_mma_f16_xreg(const Args& a, void* stream);

}  // namespace tc::cuda::quant
