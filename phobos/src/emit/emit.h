// Code generation targets beyond the interpreter.
#pragma once

#include "../bind.h"
#include "../program.h"

namespace phobos {

// CUDA C++ for NVRTC (sm_90a): one __global__ function named by the instance.
// tma = false: never the warp-specialized TMA form (passes::plan_kernel's flag).
std::string emit_cuda(const Program& prog, const ir::Kernel& k, int arch = 90, bool tma = true);
std::string cuda_entry_name(const ir::Kernel& k);

// Portable C++ for ahead-of-time CPU use: an `extern "C"` function named like the CUDA entry,
// equal to the interpreter bit for bit (emit_cpp.cpp).
std::string emit_cpp(const Program& prog, const ir::Kernel& k);

// Compiles (through the on-disk module cache) and launches on the current CUDA device.
// Throws phobos::Error("no CUDA device ...") where there is none, or when built without CUDA.
void cuda_launch(const Program& prog, const ir::Kernel& k, const BoundArgs& args, void* stream);
std::string cuda_device_name();
// Compiles these instances into the module cache on all cores (the autotuner calls it before
// timing, so candidates are not compiled one after another). Errors are left to the launch.
void cuda_precompile(const Program& prog, const std::vector<const ir::Kernel*>& ks);

// NVRTC: compiles CUDA C++ to a cubin for `arch` (e.g. "sm_90a"). Returns false with the log.
bool nvrtc_available();
bool nvrtc_compile(const std::string& src, const std::string& name, const std::string& arch,
                   std::string* cubin, std::string* log);
std::string nvrtc_version();

}  // namespace phobos
