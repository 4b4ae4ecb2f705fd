// The objects behind the C API handles, and the device interface every backend implements.
// Backends see only this header and dispatch.h; no CUDA type appears here, so other GPU
// backends can be added beside CUDA.
#pragma once

#include <tc/tc.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace tc {

// One queue of work on a device. CPU: a worker thread; CUDA: a cudaStream_t.
class StreamImpl {
 public:
  virtual ~StreamImpl() = default;
  // Queues device work: the CPU runs `work` on the stream's worker after everything submitted
  // before it; CUDA calls it at once to launch onto native(). A status other than TC_SUCCESS
  // that `work` returns is reported by the next sync(). Contract: a stream whose native() is
  // not nullptr runs `work` before submit() returns (api_gemm.cpp's work captures the call's
  // problem by reference on that path).
  virtual tc_status_t submit(std::function<tc_status_t()> work) = 0;
  // Runs a host function in stream order (CUDA: cudaLaunchHostFunc; CPU: same as submit).
  virtual tc_status_t submit_host(std::function<tc_status_t()> work) {
    return submit(std::move(work));
  }
  virtual tc_status_t sync() = 0;
  // The backend's own handle (cudaStream_t), or nullptr.
  virtual void* native() { return nullptr; }
};

// A device as a backend sees it.
class DeviceImpl {
 public:
  virtual ~DeviceImpl() = default;
  virtual tc_device_t kind() const = 0;
  virtual void fill_info(tc_device_info* info) const = 0;
  virtual bool host_visible() const = 0;
  virtual tc_status_t alloc(size_t bytes, void** ptr) = 0;
  virtual void release(void* ptr) = 0;
  virtual tc_status_t upload(void* dst, const void* src, size_t bytes) = 0;
  virtual tc_status_t download(void* dst, const void* src, size_t bytes) = 0;
  virtual std::unique_ptr<StreamImpl> create_stream() = 0;
  // Runs `work` to completion on the device's default queue (CUDA: launch then synchronize).
  virtual tc_status_t run_sync(const std::function<tc_status_t(void* native_stream)>& work) = 0;
  virtual void trim() {}
  virtual void memory_stats(uint64_t* live, uint64_t* held, uint64_t* peak) const {
    *live = *held = *peak = 0;
  }
};

std::unique_ptr<DeviceImpl> make_cpu_device();
#ifdef TC_HAVE_CUDA
bool cuda_device_available();
std::unique_ptr<DeviceImpl> make_cuda_device(tc_status_t* status);
#endif

}  // namespace tc

struct tc_context {
  tc_device_t device = TC_DEVICE_CPU;
  std::unique_ptr<tc::DeviceImpl> impl;
  std::atomic<int> live_objects{0};  // buffers and streams still referring to this context
};

struct tc_buffer {
  tc_context* ctx = nullptr;
  void* ptr = nullptr;  // device pointer (host pointer on the CPU)
  size_t bytes = 0;
  bool owned = true;
};

struct tc_stream {
  tc_context* ctx = nullptr;
  std::unique_ptr<tc::StreamImpl> impl;
};
