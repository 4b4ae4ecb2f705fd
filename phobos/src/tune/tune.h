// Autotuning (spec §4): every candidate of @autotune is checked (the @aligned promises for this
// launch's shape, and the lowering plan's resource limits), the valid ones are timed on the
// real arguments, and the fastest is cached under (kernel source hash, device, shape class).
#pragma once

#include <functional>
#include <span>

#include "../bind.h"
#include "../program.h"

namespace phobos {

// Runs one instance on bound arguments (the target's launch).
using Runner = std::function<void(const ir::Kernel&, const BoundArgs&)>;

// Shape class: per dimension symbol its power-of-two ceiling and the largest power of two (up to
// 256) dividing it, so a cached winner's @aligned promises hold for every shape of its class.
std::string shape_class(const ir::Kernel& k, const std::vector<int64_t>& dims);

// "" when `inst` can run on these dims, else why not. Resource limits of the GPU plan apply on
// every target (so a cached choice is valid everywhere); constructs only the GPU lacks do not
// stop the CPU target.
std::string candidate_error(const ir::Kernel& inst, const std::vector<int64_t>& dims,
                            Target target);

std::string tune_key(const Program& prog, const ir::Kernel& k, const std::string& device,
                     const std::vector<int64_t>& dims);

TuneResult autotune(const Program& prog, const ast::Kernel& ak, std::span<const Arg> args,
                    const LaunchOptions& opt, const std::string& device, const Runner& run);

}  // namespace phobos
