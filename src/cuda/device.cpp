// The CUDA device: selection and properties, memory (caching allocator, transfers), the stream of
// synchronous calls and the per-stream GEMM workspaces. A machine with the CUDA toolkit but no
// driver (no libcuda.so.1) sees cudaGetDeviceCount fail inside the statically linked runtime:
// cuda_device_available() is then false and creating a context reports TC_ERROR_NO_DEVICE.
#include "cuda/device.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "core/env.h"
#include "core/error.h"
#include "cuda/gemm_cublaslt.h"

namespace tc {
namespace cuda {
namespace {

struct Probe {
  int count = 0;
  cudaError_t error = cudaSuccess;
};

// Once per process: the runtime's answer does not change while it runs.
const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    r.error = cudaGetDeviceCount(&r.count);
    if (r.error != cudaSuccess) {
      r.count = 0;
      (void)cudaGetLastError();
    }
    return r;
  }();
  return p;
}

constexpr size_t kWorkspaceRound = size_t(1) << 20;

}  // namespace

void set_device(int device) {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != device) cudaSetDevice(device);
}

tc_status_t cuda_fail(cudaError_t e, const char* what) {
  (void)cudaGetLastError();  // clears the error unless it is sticky (a kernel fault)
  return fail(TC_ERROR_BACKEND_FAILURE, "{} failed: {} ({})", what, cudaGetErrorString(e),
              cudaGetErrorName(e));
}

CudaDevice::CudaDevice(int ordinal) : ordinal_(ordinal), alloc_(ordinal) {}

tc_status_t CudaDevice::create(std::unique_ptr<DeviceImpl>* out) {
  const Probe& pr = probe();
  if (pr.count == 0)
    return fail(
        TC_ERROR_NO_DEVICE, "no CUDA device: {}",
        pr.error != cudaSuccess ? cudaGetErrorString(pr.error) : "the driver reports no devices");
  int ordinal = 0;
  if (auto v = env::get("TC_CUDA_DEVICE")) {
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), ordinal);
    if (ec != std::errc() || end != v->data() + v->size() || ordinal < 0 || ordinal >= pr.count)
      return fail(TC_ERROR_NO_DEVICE,
                  "environment variable TC_CUDA_DEVICE is '{}'; this machine has CUDA devices "
                  "0..{}",
                  *v, pr.count - 1);
  }
  std::unique_ptr<CudaDevice> d(new CudaDevice(ordinal));
  set_device(ordinal);
  cudaError_t e = cudaGetDeviceProperties(&d->props_, ordinal);
  if (e != cudaSuccess) return cuda_fail(e, "cudaGetDeviceProperties");
  d->gemm_dev_.sm_count = d->props_.multiProcessorCount;
  d->gemm_dev_.cc_major = d->props_.major;
  d->gemm_dev_.cc_minor = d->props_.minor;
  d->gemm_dev_.smem_optin = d->props_.sharedMemPerBlockOptin;
  // A blocking stream: it waits for the legacy default stream, where cudaMemcpy uploads run.
  e = cudaStreamCreate(&d->stream_);
  if (e != cudaSuccess) return cuda_fail(e, "cudaStreamCreate");
  TC_TRY(CublasLt::create(&d->lt_));
  d->device_key_ = fmt::format("{} sm_{}{} {} SMs cublasLt {}", d->props_.name, d->props_.major,
                               d->props_.minor, d->props_.multiProcessorCount, d->lt_->version());
  *out = std::move(d);
  return TC_SUCCESS;
}

CudaDevice::~CudaDevice() {
  set_device(ordinal_);
  if (stream_) cudaStreamSynchronize(stream_);
  for (auto& [stream, slot] : ws_) alloc_.release(slot->ptr);
  ws_.clear();
  lt_.reset();
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaDevice::fill_info(tc_device_info* info) const {
  info->device = TC_DEVICE_CUDA;
  const size_t n = std::min(sizeof info->name - 1, std::strlen(props_.name));
  std::memcpy(info->name, props_.name, n);
  info->name[n] = '\0';
  info->compute_units = props_.multiProcessorCount;
  info->cc_major = props_.major;
  info->cc_minor = props_.minor;
  info->memory_bytes = props_.totalGlobalMem;
  info->l2_bytes = uint64_t(props_.l2CacheSize);
}

tc_status_t CudaDevice::upload(void* dst, const void* src, size_t bytes) {
  set_device(ordinal_);
  cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
  return e == cudaSuccess ? TC_SUCCESS : cuda_fail(e, "copying to the CUDA device (cudaMemcpy)");
}

tc_status_t CudaDevice::download(void* dst, const void* src, size_t bytes) {
  set_device(ordinal_);
  cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? TC_SUCCESS : cuda_fail(e, "copying from the CUDA device (cudaMemcpy)");
}

std::unique_ptr<StreamImpl> CudaDevice::create_stream() {
  set_device(ordinal_);
  cudaStream_t s = nullptr;
  if (cudaStreamCreate(&s) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return make_cuda_stream(this, s);
}

tc_status_t CudaDevice::run_sync(const std::function<tc_status_t(void* native_stream)>& work) {
  set_device(ordinal_);
  TC_TRY(work(stream_));
  cudaError_t e = cudaStreamSynchronize(stream_);
  return e == cudaSuccess ? TC_SUCCESS : cuda_fail(e, "running a CUDA kernel");
}

void CudaDevice::trim() {
  set_device(ordinal_);
  {
    std::lock_guard lock(ws_mu_);
    for (auto& [stream, slot] : ws_) {
      std::lock_guard slot_lock(slot->mu);
      if (slot->ptr == nullptr) continue;
      cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      alloc_.release(slot->ptr);
      slot->ptr = nullptr;
      slot->bytes = 0;
    }
  }
  alloc_.trim();
}

tc_status_t CudaDevice::workspace(void* stream, size_t bytes, Workspace* out) {
  Slot* slot;
  {
    std::lock_guard lock(ws_mu_);
    auto& s = ws_[stream];
    if (!s) s = std::make_unique<Slot>();
    slot = s.get();
  }
  std::unique_lock lock(slot->mu);
  if (bytes > slot->bytes) {
    if (slot->ptr != nullptr) {
      // Work already queued on this stream may still read the old block.
      cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      if (e != cudaSuccess)
        return cuda_fail(e, "waiting for the stream before growing its workspace");
      alloc_.release(slot->ptr);
      slot->ptr = nullptr;
      slot->bytes = 0;
    }
    const size_t rounded = (bytes + kWorkspaceRound - 1) / kWorkspaceRound * kWorkspaceRound;
    TC_TRY(alloc_.alloc(rounded, &slot->ptr));
    slot->bytes = rounded;
  }
  out->ptr = slot->ptr;
  out->lock = std::move(lock);
  return TC_SUCCESS;
}

void CudaDevice::drop_workspace(void* stream) {
  std::unique_ptr<Slot> slot;
  {
    std::lock_guard lock(ws_mu_);
    auto it = ws_.find(stream);
    if (it == ws_.end()) return;
    slot = std::move(it->second);
    ws_.erase(it);
  }
  std::lock_guard lock(slot->mu);
  alloc_.release(slot->ptr);
}

}  // namespace cuda

bool cuda_device_available() {
  return cuda::probe().count > 0;
}

std::unique_ptr<DeviceImpl> make_cuda_device(tc_status_t* status) {
  std::unique_ptr<DeviceImpl> dev;
  *status = cuda::CudaDevice::create(&dev);
  return *status == TC_SUCCESS ? std::move(dev) : nullptr;
}

}  // namespace tc
