// The CUDA device behind a tc context: one GPU (TC_CUDA_DEVICE=<ordinal>, default 0), a caching
// allocator, a stream for synchronous calls, per-stream GEMM workspaces, a cuBLASLt handle, and
// the timing hook of the autotuner. Only src/cuda includes this header.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/autotune.h"
#include "core/internal.h"
#include "cuda/allocator.h"
#include "cuda/gemm_kernels.h"

namespace tc::cuda {

class CublasLt;

// Makes `device` current on the calling thread (contexts may be used from any thread).
void set_device(int device);
// Sets the thread's error message for a failed CUDA call and returns TC_ERROR_BACKEND_FAILURE.
tc_status_t cuda_fail(cudaError_t e, const char* what);

class CudaDevice final : public DeviceImpl, public GemmTimer {
 public:
  static tc_status_t create(std::unique_ptr<DeviceImpl>* out);
  ~CudaDevice() override;

  // DeviceImpl
  tc_device_t kind() const override { return TC_DEVICE_CUDA; }
  void fill_info(tc_device_info* info) const override;
  bool host_visible() const override { return false; }
  tc_status_t alloc(size_t bytes, void** ptr) override { return alloc_.alloc(bytes, ptr); }
  void release(void* ptr) override { alloc_.release(ptr); }
  tc_status_t upload(void* dst, const void* src, size_t bytes) override;
  tc_status_t download(void* dst, const void* src, size_t bytes) override;
  std::unique_ptr<StreamImpl> create_stream() override;
  tc_status_t run_sync(const std::function<tc_status_t(void* native_stream)>& work) override;
  void trim() override;
  void memory_stats(uint64_t* live, uint64_t* held, uint64_t* peak) const override {
    alloc_.stats(live, held, peak);
  }

  // GemmTimer (gemm_timer.cpp)
  const std::string& device_key() const override { return device_key_; }
  int gemm_variants(const GemmProblem& p, const GemmRow& row) override;
  double time_gemm(const GemmProblem& p, const GemmRow& row, int variant) override;

  // Scratch memory for the GEMM launched next on `stream`, kept per stream so that work queued
  // on one stream never shares it with another. The lock is held until the launch is queued;
  // growing waits for the stream's earlier work before the old block is released.
  struct Workspace {
    std::unique_lock<std::mutex> lock;
    void* ptr = nullptr;
  };
  tc_status_t workspace(void* stream, size_t bytes, Workspace* out);
  void drop_workspace(void* stream);  // the stream is synchronized and going away

  int ordinal() const { return ordinal_; }
  const GemmDevice& gemm_device() const { return gemm_dev_; }
  const cudaDeviceProp& props() const { return props_; }
  CublasLt& cublaslt() { return *lt_; }

 private:
  explicit CudaDevice(int ordinal);  // out of line: CublasLt is incomplete here

  struct Slot {
    std::mutex mu;
    void* ptr = nullptr;
    size_t bytes = 0;
  };

  int ordinal_ = 0;
  cudaDeviceProp props_{};
  GemmDevice gemm_dev_;
  CachingAllocator alloc_;
  cudaStream_t stream_ = nullptr;  // synchronous calls and autotune timing
  std::unique_ptr<CublasLt> lt_;
  std::string device_key_;  // "NVIDIA H200 sm_90 132 SMs cublasLt 130100"
  std::mutex ws_mu_;
  std::unordered_map<void*, std::unique_ptr<Slot>> ws_;
};

std::unique_ptr<StreamImpl> make_cuda_stream(CudaDevice* dev, cudaStream_t s);  // stream.cpp

// The device of a context that a CUDA dispatch row runs on.
inline CudaDevice& device_of(const GemmProblem& p) {
  return static_cast<CudaDevice&>(*p.ctx->impl);
}

}  // namespace tc::cuda
