// Minimal device-memory helpers for tools and tests (the library's tc buffers replace these in
// programs). Each throws phobos::Error("no CUDA device ...") where there is no device.
#pragma once

#include <cstddef>
#include <string>

namespace phobos::cuda {

bool device_present(std::string* why = nullptr);
void* alloc(size_t bytes);
void free(void* p);
void copy_to_device(void* dst, const void* src, size_t bytes);
void copy_to_host(void* dst, const void* src, size_t bytes);
void copy_on_device(void* dst, const void* src, size_t bytes);
void synchronize();

}  // namespace phobos::cuda
