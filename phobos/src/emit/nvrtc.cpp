// NVRTC: CUDA C++ -> cubin. Built only when the CUDA toolkit is present; otherwise every entry
// point reports that NVRTC is unavailable, and the CPU target is unaffected.
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "emit.h"
#include "headers.h"

#ifdef PHOBOS_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace phobos {

#ifdef PHOBOS_HAVE_NVRTC

bool nvrtc_available() {
  return true;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

static std::string cuda_include_dir() {
  // The fp16/bf16 headers: where the build found the toolkit, else $CUDA_HOME, else the default.
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* e = std::getenv(env);
        e && fs::exists(fs::path(e) / "include" / "cuda_fp16.h", ec))
      return std::string(e) + "/include";
#ifdef PHOBOS_CUDA_INCLUDE
  if (fs::exists(fs::path(PHOBOS_CUDA_INCLUDE) / "cuda_fp16.h", ec)) return PHOBOS_CUDA_INCLUDE;
#endif
  return "/usr/local/cuda/include";
}

bool nvrtc_compile(const std::string& src, const std::string& name, const std::string& arch,
                   std::string* cubin, std::string* log) {
  nvrtcProgram prog;
  std::vector<const char*> hdr_text, hdr_name;
  for (auto& h : embedded_headers()) {
    hdr_name.push_back(h.name);
    hdr_text.push_back(h.text);
  }
  if (nvrtcCreateProgram(&prog, src.c_str(), (name + ".cu").c_str(),
                         static_cast<int>(hdr_text.size()), hdr_text.data(),
                         hdr_name.data()) != NVRTC_SUCCESS) {
    *log = "nvrtcCreateProgram failed";
    return false;
  }
  std::string arch_opt = "--gpu-architecture=" + arch;
  std::string inc = "-I" + cuda_include_dir();
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", inc.c_str(), "-default-device",
                        "--extra-device-vectorization"};
  nvrtcResult r = nvrtcCompileProgram(prog, 5, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  log->assign(n, '\0');
  if (n) nvrtcGetProgramLog(prog, log->data());
  while (!log->empty() && (log->back() == '\0' || log->back() == '\n')) log->pop_back();
  if (r != NVRTC_SUCCESS) {
    if (log->empty()) *log = nvrtcGetErrorString(r);
    nvrtcDestroyProgram(&prog);
    return false;
  }
  size_t size = 0;
  nvrtcGetCUBINSize(prog, &size);
  cubin->assign(size, '\0');
  nvrtcGetCUBIN(prog, cubin->data());
  nvrtcDestroyProgram(&prog);
  return size > 0;
}

#else

bool nvrtc_available() {
  return false;
}
std::string nvrtc_version() {
  return "none";
}
bool nvrtc_compile(const std::string&, const std::string&, const std::string&, std::string*,
                   std::string* log) {
  *log = "phobos was built without NVRTC (the CUDA toolkit was not found)";
  return false;
}

#endif

}  // namespace phobos
