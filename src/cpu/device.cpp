// The CPU device: 64-byte-aligned host memory, and streams that run queued work in order on a
// worker thread. The first error a stream's work raises is kept and returned by sync().
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/internal.h"
#include "cpu/cpu_features.h"
#include "cpu/thread_pool.h"

namespace tc {
namespace {

class CpuStream final : public StreamImpl {
 public:
  CpuStream() : worker_([this] { loop(); }) {}
  ~CpuStream() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  tc_status_t submit(std::function<tc_status_t()> work) override {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(work));
      ++pending_;
    }
    cv_.notify_all();
    return TC_SUCCESS;
  }

  tc_status_t sync() override {
    std::unique_lock lock(mu_);
    idle_cv_.wait(lock, [&] { return pending_ == 0; });
    tc_status_t st = error_;
    if (st != TC_SUCCESS) {
      set_error_message("work queued on this stream failed: " + error_message_);
      error_ = TC_SUCCESS;
      error_message_.clear();
    }
    return st;
  }

 private:
  void loop() {
    for (;;) {
      std::function<tc_status_t()> work;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stop_ and drained
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      tc_status_t st = work();
      std::lock_guard lock(mu_);
      if (st != TC_SUCCESS && error_ == TC_SUCCESS) {
        error_ = st;
        error_message_ = tc_last_error_message();
      }
      if (--pending_ == 0) idle_cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::function<tc_status_t()>> queue_;
  int64_t pending_ = 0;
  tc_status_t error_ = TC_SUCCESS;
  std::string error_message_;
  bool stop_ = false;
  std::thread worker_;  // last: starts after the members it uses exist
};

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  }
  return "CPU";
}

class CpuDevice final : public DeviceImpl {
 public:
  tc_device_t kind() const override { return TC_DEVICE_CPU; }
  bool host_visible() const override { return true; }

  void fill_info(tc_device_info* info) const override {
    info->device = TC_DEVICE_CPU;
    std::snprintf(info->name, sizeof info->name, "%s", cpu_model_name().c_str());
    info->compute_units = cpu::thread_count();
    info->memory_bytes = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    info->l2_bytes = l3 > 0 ? uint64_t(l3) : 0;
    info->cpu_features = cpu::features();
  }

  tc_status_t alloc(size_t bytes, void** ptr) override {
    size_t rounded = (bytes + 63) / 64 * 64;
    *ptr = std::aligned_alloc(64, rounded);
    if (*ptr == nullptr)
      return fail(TC_ERROR_OUT_OF_MEMORY, "allocating {} bytes of host memory failed", bytes);
    return TC_SUCCESS;
  }
  void release(void* ptr) override { std::free(ptr); }
  tc_status_t upload(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return TC_SUCCESS;
  }
  tc_status_t download(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return TC_SUCCESS;
  }
  std::unique_ptr<StreamImpl> create_stream() override { return std::make_unique<CpuStream>(); }
  tc_status_t run_sync(const std::function<tc_status_t(void*)>& work) override {
    return work(nullptr);
  }
};

}  // namespace

std::unique_ptr<DeviceImpl> make_cpu_device() {
  return std::make_unique<CpuDevice>();
}

}  // namespace tc
