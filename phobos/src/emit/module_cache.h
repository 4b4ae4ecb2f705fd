// On-disk cache of compiled modules, keyed by the kernel's source hash, the instance (its
// parameters, in the generated code), the NVRTC version and the device architecture.
#pragma once

#include <string>

namespace phobos {

// PHOBOS_MODULE_CACHE, else ~/.cache/tc/phobos-modules.
std::string module_cache_dir();
std::string module_cache_key(const std::string& source_hash, const std::string& cuda_src,
                             const std::string& nvrtc_version, const std::string& arch);
// Returns the cubin for `key`, compiling `cuda_src` with NVRTC on a miss (and storing it
// atomically). Throws phobos::Error with the NVRTC log on a compile failure.
std::string module_cache_get(const std::string& key, const std::string& cuda_src,
                             const std::string& entry, const std::string& arch, bool* hit);

}  // namespace phobos
