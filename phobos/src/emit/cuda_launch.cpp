// Launching generated kernels: cudaLibraryLoadData + cudaLibraryGetKernel + cudaLaunchKernel
// through the static CUDA runtime (never libcuda directly), so a machine without a driver gets
// the status "no CUDA device", not a loader error.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "../passes/plan.h"
#include "emit.h"
#include "headers.h"
#include "module_cache.h"
#include "phobos/phobos.h"

#ifdef PHOBOS_HAVE_CUDART
#include <cuda_runtime.h>

#include "tma_launch.h"
#endif

namespace phobos {

#ifdef PHOBOS_HAVE_CUDART

struct Loaded;
static Loaded load_instance(const Program& prog, const ir::Kernel& k, const std::string& entry,
                            bool tma);
static void launch_loaded(const ir::Kernel& k, const BoundArgs& b, void* stream, const Loaded& ld,
                          const std::string& entry);

static int device_arch(std::string* name) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0)
    throw Error(std::string("no CUDA device (") +
                (e != cudaSuccess ? cudaGetErrorString(e) : "none found") + ")");
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, dev);
  if (name) *name = prop.name;
  return prop.major * 10 + prop.minor;
}

std::string cuda_device_name() {
  std::string name;
  int arch = device_arch(&name);
  for (auto& c : name)
    if (c == ' ' || c == '/') c = '_';
  return "cuda-sm" + std::to_string(arch) + "-" + name;
}

// sm_90a unlocks the Hopper-only instructions (wgmma); other parts get their plain architecture.
static std::string arch_name(int arch_num) {
  return "sm_" + std::to_string(arch_num) + (arch_num == 90 ? "a" : "");
}

// The key covers the embedded headers too: a changed tile library is a new module.
static std::string module_key(const Program& prog, const std::string& src,
                              const std::string& arch) {
  std::string keysrc = src;
  for (auto& h : embedded_headers()) keysrc += h.text;
  return module_cache_key(prog.source_hash, keysrc, nvrtc_version(), arch);
}

void cuda_precompile(const Program& prog, const std::vector<const ir::Kernel*>& ks) {
  int arch_num = device_arch(nullptr);
  std::string arch = arch_name(arch_num);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < ks.size();) {
      try {
        std::string src = emit_cuda(prog, *ks[i], arch_num);
        bool hit = false;
        module_cache_get(module_key(prog, src, arch), src, cuda_entry_name(*ks[i]), arch, &hit);
      } catch (const Error&) {
        // reported by the launch that needs this instance
      }
    }
  };
  unsigned n = std::min<unsigned>(16, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(n, ks.size()); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

// A loaded instance: what a repeated launch needs without planning or emitting again.
struct Loaded {
  cudaKernel_t kern = nullptr;
  int64_t smem_bytes = 0;
  // The warp-specialized TMA form: its operands (tensor maps built per launch) and the
  // persistent grid's size (CTAs per SM times SMs).
  bool ws = false;
  std::vector<passes::Plan::TmaOperand> tma;
  int64_t max_ctas = 0;
};

void cuda_launch(const Program& prog, const ir::Kernel& k, const BoundArgs& b, void* stream) {
  std::string entry = cuda_entry_name(k);
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) device_arch(nullptr);  // throws "no CUDA device"
  static std::mutex mu;
  static std::map<std::string, Loaded> by_entry;  // source hash / entry / device / form
  auto get = [&](bool tma) {
    std::string ekey =
        prog.source_hash + "/" + entry + "/" + std::to_string(dev) + (tma ? "" : "/no-tma");
    Loaded ld{};
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = by_entry.find(ekey);
      if (it != by_entry.end()) ld = it->second;
    }
    if (!ld.kern) ld = load_instance(prog, k, entry, tma);
    std::lock_guard<std::mutex> lock(mu);
    by_entry[ekey] = ld;
    return ld;
  };
  // PHOBOS_TMA=0 is read per launch (tests compare both forms in one process).
  const char* env = std::getenv("PHOBOS_TMA");
  Loaded ld = get(!(env && std::string(env) == "0"));
  // TMA needs 16-byte aligned bases and row pitches; other launches take the cp.async form.
  if (ld.ws && !tma_legal(ld.tma, b)) ld = get(false);
  launch_loaded(k, b, stream, ld, entry);
}

static Loaded load_instance(const Program& prog, const ir::Kernel& k, const std::string& entry,
                            bool tma) {
  int arch_num = device_arch(nullptr);
  std::string arch = arch_name(arch_num);
  passes::Plan plan = passes::plan_kernel(k, arch_num, tma);
  std::string src = emit_cuda(prog, k, arch_num, tma);
  std::string key = module_key(prog, src, arch);
  static std::mutex mu;
  static std::map<std::string, std::pair<cudaLibrary_t, cudaKernel_t>> loaded;
  cudaKernel_t kern;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = loaded.find(key);
    if (it == loaded.end()) {
      bool hit = false;
      std::string cubin = module_cache_get(key, src, entry, arch, &hit);
      cudaLibrary_t lib;
      cudaError_t e =
          cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
      if (e != cudaSuccess)
        throw Error("cudaLibraryLoadData: " + std::string(cudaGetErrorString(e)));
      e = cudaLibraryGetKernel(&kern, lib, entry.c_str());
      if (e != cudaSuccess)
        throw Error("cudaLibraryGetKernel(" + entry + "): " + cudaGetErrorString(e));
      if (plan.smem_bytes > 48 * 1024) {
        e = cudaFuncSetAttribute(reinterpret_cast<const void*>(kern),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(plan.smem_bytes));
        if (e != cudaSuccess)
          throw Error("cudaFuncSetAttribute: " + std::string(cudaGetErrorString(e)));
      }
      loaded[key] = {lib, kern};
    } else {
      kern = it->second.second;
    }
  }
  Loaded ld;
  ld.kern = kern;
  ld.smem_bytes = plan.smem_bytes;
  if (plan.ws) {
    ld.ws = true;
    ld.tma = plan.tma;
    int dev = 0, sms = 0, per_sm = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, reinterpret_cast<const void*>(kern), static_cast<int>(k.threads + 128),
        static_cast<size_t>(plan.smem_bytes));
    if (e != cudaSuccess || per_sm < 1) {
      (void)cudaGetLastError();  // not sticky, but keep it from surfacing in a caller's check
      per_sm = 1;
    }
    ld.max_ctas = static_cast<int64_t>(std::max(sms, 1)) * per_sm;
  }
  return ld;
}

static void launch_loaded(const ir::Kernel& k, const BoundArgs& b, void* stream, const Loaded& ld,
                          const std::string& entry) {
  // Arguments in the generated signature's order: parameters, then dimension symbols.
  std::vector<void*> ptrs(k.args.size());
  std::vector<float> fs(k.args.size());
  std::vector<int> is(k.args.size() + k.dims.size());
  std::vector<void*> argv;
  for (size_t i = 0; i < k.args.size(); ++i) {
    if (k.args[i].is_tensor) {
      ptrs[i] = b.tensors[i].data;
      argv.push_back(&ptrs[i]);
    } else if (is_float(k.args[i].dt)) {
      fs[i] = static_cast<float>(b.scalars[i]);
      argv.push_back(&fs[i]);
    } else {
      is[i] = static_cast<int>(b.scalars[i]);
      argv.push_back(&is[i]);
    }
  }
  for (size_t d = 0; d < k.dims.size(); ++d) {
    is[k.args.size() + d] = static_cast<int>(b.dims[d]);
    argv.push_back(&is[k.args.size() + d]);
  }
  dim3 grid(static_cast<unsigned>(eval_host(k, k.grid[0], b)),
            static_cast<unsigned>(eval_host(k, k.grid[1], b)),
            static_cast<unsigned>(eval_host(k, k.grid[2], b)));
  unsigned threads = static_cast<unsigned>(k.threads);
  std::vector<TmaMapHost> maps(ld.tma.size());
  if (ld.ws) {
    // Persistent: one CTA per resident slot walks the logical grid (the kernel computes it).
    // PHOBOS_MAX_CTAS caps it (tests: several tiles per CTA on small shapes).
    int64_t tiles = int64_t(grid.x) * grid.y * grid.z, ctas = ld.max_ctas;
    if (const char* cap = std::getenv("PHOBOS_MAX_CTAS"))
      ctas = std::clamp<int64_t>(std::atoll(cap), 1, ctas);
    grid = dim3(static_cast<unsigned>(std::max<int64_t>(1, std::min(tiles, ctas))));
    threads += 128;  // the producer warpgroup
    for (size_t i = 0; i < ld.tma.size(); ++i) {
      if (!tma_encode(ld.tma[i], b, &maps[i]))
        throw Error("cuTensorMapEncodeTiled failed for argument '" + k.args[ld.tma[i].arg].name +
                    "' of '" + k.name + "'");
      argv.push_back(&maps[i]);
    }
  }
  cudaError_t e =
      cudaLaunchKernel(reinterpret_cast<const void*>(ld.kern), grid, dim3(threads), argv.data(),
                       static_cast<size_t>(ld.smem_bytes), static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) throw Error("cudaLaunchKernel(" + entry + "): " + cudaGetErrorString(e));
}

#else

std::string cuda_device_name() {
  throw Error("no CUDA device (phobos was built without CUDA)");
}
void cuda_launch(const Program&, const ir::Kernel&, const BoundArgs&, void*) {
  throw Error("no CUDA device (phobos was built without CUDA)");
}
void cuda_precompile(const Program&, const std::vector<const ir::Kernel*>&) {}

#endif

}  // namespace phobos

#include "phobos/cuda.h"

namespace phobos::cuda {

#ifdef PHOBOS_HAVE_CUDART
static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}
bool device_present(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) return true;
  if (why)
    *why = std::string("no CUDA device (") +
           (e != cudaSuccess ? cudaGetErrorString(e) : "none found") + ")";
  return false;
}
void* alloc(size_t bytes) {
  std::string why;
  if (!device_present(&why)) throw Error(why);
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  return p;
}
void free(void* p) {
  cudaFree(p);
}
void copy_to_device(void* d, const void* s, size_t n) {
  check(cudaMemcpy(d, s, n, cudaMemcpyHostToDevice), "cudaMemcpy");
}
void copy_to_host(void* d, const void* s, size_t n) {
  check(cudaMemcpy(d, s, n, cudaMemcpyDeviceToHost), "cudaMemcpy");
}
void copy_on_device(void* d, const void* s, size_t n) {
  check(cudaMemcpy(d, s, n, cudaMemcpyDeviceToDevice), "cudaMemcpy");
}
void synchronize() {
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}
#else
bool device_present(std::string* why) {
  if (why) *why = "no CUDA device (phobos was built without CUDA)";
  return false;
}
void* alloc(size_t) {
  throw Error("no CUDA device (phobos was built without CUDA)");
}
void free(void*) {}
void copy_to_device(void*, const void*, size_t) {
  throw Error("no CUDA device (phobos was built without CUDA)");
}
void copy_to_host(void*, const void*, size_t) {
  throw Error("no CUDA device (phobos was built without CUDA)");
}
void copy_on_device(void*, const void*, size_t) {
  throw Error("no CUDA device (phobos was built without CUDA)");
}
void synchronize() {}
#endif

}  // namespace phobos::cuda
