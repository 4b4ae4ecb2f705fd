// A tc stream on a cudaStream_t. submit() launches at once (the work only enqueues kernels);
// host functions run in stream order through cudaLaunchHostFunc. The first failure, of a launch
// or of a host function, is kept with its message and returned by the next sync().
#include <string>

#include "core/error.h"
#include "cuda/device.h"

namespace tc::cuda {
namespace {

class CudaStream final : public StreamImpl {
 public:
  CudaStream(CudaDevice* dev, cudaStream_t s) : dev_(dev), s_(s) {}
  ~CudaStream() override {
    set_device(dev_->ordinal());
    cudaStreamSynchronize(s_);
    dev_->drop_workspace(s_);
    cudaStreamDestroy(s_);
  }

  tc_status_t submit(std::function<tc_status_t()> work) override {
    set_device(dev_->ordinal());
    tc_status_t st = work();
    if (st != TC_SUCCESS) record(st, tc_last_error_message());
    return TC_SUCCESS;
  }

  tc_status_t submit_host(std::function<tc_status_t()> work) override {
    set_device(dev_->ordinal());
    auto* call = new HostCall{this, std::move(work)};
    cudaError_t e = cudaLaunchHostFunc(s_, &HostCall::run, call);
    if (e != cudaSuccess) {
      delete call;
      return cuda_fail(e, "queuing a host function (cudaLaunchHostFunc)");
    }
    return TC_SUCCESS;
  }

  tc_status_t sync() override {
    set_device(dev_->ordinal());
    cudaError_t e = cudaStreamSynchronize(s_);
    if (e != cudaSuccess) return cuda_fail(e, "work queued on this stream");
    std::lock_guard lock(mu_);
    tc_status_t st = error_;
    if (st != TC_SUCCESS) {
      set_error_message("work queued on this stream failed: " + message_);
      error_ = TC_SUCCESS;
      message_.clear();
    }
    return st;
  }

  void* native() override { return s_; }

 private:
  // Runs on a thread of the CUDA driver; it must not call CUDA (cudaLaunchHostFunc's rule).
  struct HostCall {
    CudaStream* stream;
    std::function<tc_status_t()> work;
    static void run(void* p) {
      auto* call = static_cast<HostCall*>(p);
      tc_status_t st = call->work();
      if (st != TC_SUCCESS) call->stream->record(st, tc_last_error_message());
      delete call;
    }
  };

  void record(tc_status_t st, const char* message) {
    std::lock_guard lock(mu_);
    if (error_ != TC_SUCCESS) return;  // keep the first
    error_ = st;
    message_ = message;
  }

  CudaDevice* dev_;
  cudaStream_t s_;
  std::mutex mu_;
  tc_status_t error_ = TC_SUCCESS;
  std::string message_;
};

}  // namespace

std::unique_ptr<StreamImpl> make_cuda_stream(CudaDevice* dev, cudaStream_t s) {
  return std::make_unique<CudaStream>(dev, s);
}

}  // namespace tc::cuda
