// Run-time CPU feature detection (CPUID through the compiler's builtins), and TC_CPU_ISA, a
// knob that caps the ISA the kernels may use (scalar|avx2|avx512) so tests can reach every path.
#pragma once

#include <cstdint>

namespace tc::cpu {

uint32_t features();  // TC_CPU_* bits of tc.h, after the TC_CPU_ISA cap
bool has(uint32_t bits);

}  // namespace tc::cpu
