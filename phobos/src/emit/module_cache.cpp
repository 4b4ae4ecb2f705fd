#include "module_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emit.h"
#include "phobos/phobos.h"

namespace phobos {

std::string module_cache_dir() {
  if (const char* e = std::getenv("PHOBOS_MODULE_CACHE"); e && *e) return e;
  const char* home = std::getenv("HOME");
  std::string base = home && *home ? std::string(home) + "/.cache" : "/tmp";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) base = x;
  return base + "/tc/phobos-modules";
}

std::string module_cache_key(const std::string& source_hash, const std::string& cuda_src,
                             const std::string& nvrtc_version, const std::string& arch) {
  uint64_t h = 1469598103934665603ull;
  for (const std::string* s : {&source_hash, &cuda_src, &nvrtc_version, &arch}) {
    for (unsigned char c : *s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  }
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf) + "-" + arch + "-nvrtc" + nvrtc_version;
}

std::string module_cache_get(const std::string& key, const std::string& cuda_src,
                             const std::string& entry, const std::string& arch, bool* hit) {
  namespace fs = std::filesystem;
  fs::path p = fs::path(module_cache_dir()) / (key + ".cubin");
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (in && !ss.str().empty()) {
      *hit = true;
      return ss.str();
    }
  }
  *hit = false;
  std::string cubin, log;
  if (!nvrtc_compile(cuda_src, entry, arch, &cubin, &log))
    throw Error("NVRTC could not compile '" + entry + "' for " + arch + ": " + log);
  fs::create_directories(p.parent_path(), ec);
  std::string tmp = p.string() + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  }
  fs::rename(tmp, p, ec);  // a cache we cannot write only costs a recompile
  if (ec) fs::remove(tmp, ec);
  return cubin;
}

}  // namespace phobos
