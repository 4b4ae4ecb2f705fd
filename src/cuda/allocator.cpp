#include "cuda/allocator.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "core/error.h"

namespace tc::cuda {

CachingAllocator::~CachingAllocator() {
  cudaSetDevice(device_);
  for (auto& [size, p] : cached_) cudaFree(p);
  // Blocks still live belong to buffers the user did not free; the context is going away.
  for (auto& [p, size] : live_) cudaFree(p);
}

tc_status_t CachingAllocator::alloc(size_t bytes, void** ptr) {
  const size_t size = (bytes + kGranularity - 1) / kGranularity * kGranularity;
  std::lock_guard lock(mu_);
  // Smallest cached block that fits, if it wastes no more than 1/16 of itself.
  auto it = cached_.lower_bound(size);
  if (it != cached_.end() && it->first - size <= it->first / 16) {
    *ptr = it->second;
    live_[it->second] = it->first;
    live_bytes_ += it->first;
    peak_live_ = std::max(peak_live_, live_bytes_);
    cached_.erase(it);
    return TC_SUCCESS;
  }
  cudaSetDevice(device_);
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, size);
  if (e == cudaErrorMemoryAllocation && !cached_.empty()) {
    (void)cudaGetLastError();  // clear the error, return the cache to the driver, retry once
    while (!cached_.empty()) free_cached_locked(cached_.begin());
    e = cudaMalloc(&p, size);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(e == cudaErrorMemoryAllocation ? TC_ERROR_OUT_OF_MEMORY : TC_ERROR_BACKEND_FAILURE,
                "allocating {} bytes of CUDA device memory failed: {}", bytes,
                cudaGetErrorString(e));
  }
  *ptr = p;
  live_[p] = size;
  live_bytes_ += size;
  held_bytes_ += size;
  peak_live_ = std::max(peak_live_, live_bytes_);
  enforce_cap_locked();
  peak_held_ = std::max(peak_held_, held_bytes_);
  return TC_SUCCESS;
}

void CachingAllocator::release(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;  // not ours (cannot happen through the API)
  live_bytes_ -= it->second;
  cached_.emplace(it->second, ptr);
  live_.erase(it);
}

void CachingAllocator::trim() {
  std::lock_guard lock(mu_);
  cudaSetDevice(device_);
  while (!cached_.empty()) free_cached_locked(cached_.begin());
  peak_live_ = live_bytes_;
  peak_held_ = held_bytes_;
}

void CachingAllocator::stats(uint64_t* live, uint64_t* held, uint64_t* peak) const {
  std::lock_guard lock(mu_);
  *live = live_bytes_;
  *held = held_bytes_;
  *peak = peak_held_;
}

void CachingAllocator::free_cached_locked(std::multimap<size_t, void*>::iterator it) {
  cudaFree(it->second);
  held_bytes_ -= it->first;
  cached_.erase(it);
}

// held <= peak_live * 1.1: evict the largest cached blocks first (fewest cudaFree calls).
// Always reachable, because held - cached = live <= peak_live.
void CachingAllocator::enforce_cap_locked() {
  const uint64_t cap = peak_live_ + peak_live_ / 10;
  while (held_bytes_ > cap && !cached_.empty()) free_cached_locked(std::prev(cached_.end()));
}

}  // namespace tc::cuda
