// A caching allocator over cudaMalloc for one device (no managed memory).
//
// Freed blocks are kept and handed out again, since cudaMalloc/cudaFree cost tens of
// microseconds and cudaFree synchronizes the device. Bounds:
//  - a block is reused only for a request of at least 15/16 of its size, so a live buffer wastes
//    at most 1/16 of its block;
//  - the bytes held (live + cached) never exceed the peak live bytes + 10%: when a new block
//    would break that, the largest cached blocks are returned to the driver first;
//  - trim() returns every cached block and restarts the peaks at the current live set.
// Sizes are counted in blocks (requests rounded up to 512 bytes, cudaMalloc's granularity).
// Callers free a block only after the work using it has finished (a stream sync), as with
// cudaFree; tc's own workspaces follow that rule (device.cpp).
#pragma once

#include <tc/tc.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

namespace tc::cuda {

class CachingAllocator {
 public:
  explicit CachingAllocator(int device) : device_(device) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  tc_status_t alloc(size_t bytes, void** ptr);
  void release(void* ptr);
  void trim();
  // live: blocks in use; held: live + cached; peak: the most held since creation or trim().
  void stats(uint64_t* live, uint64_t* held, uint64_t* peak) const;

  static constexpr size_t kGranularity = 512;

 private:
  void free_cached_locked(std::multimap<size_t, void*>::iterator it);
  void enforce_cap_locked();

  int device_;
  mutable std::mutex mu_;
  std::multimap<size_t, void*> cached_;     // block size -> pointer
  std::unordered_map<void*, size_t> live_;  // pointer -> block size
  uint64_t live_bytes_ = 0, held_bytes_ = 0, peak_live_ = 0, peak_held_ = 0;
};

}  // namespace tc::cuda
