#include "common/backends.h"

namespace tc::test {

std::vector<tc_device_t> all_devices() {
  return {TC_DEVICE_CPU, TC_DEVICE_CUDA};
}

std::string device_name(tc_device_t d) {
  return d == TC_DEVICE_CPU ? "cpu" : d == TC_DEVICE_CUDA ? "cuda" : "auto";
}

std::string device_unavailable_reason(tc_device_t d) {
  if (d != TC_DEVICE_CUDA) return "";
#ifndef TC_HAVE_CUDA
  return "skipped: this build of tc has no CUDA backend (configure with -DTC_CUDA=ON)";
#else
  if (!tc_device_available(TC_DEVICE_CUDA))
    return "skipped: no CUDA device (the CUDA backend is built, but no GPU or driver is present)";
  return "";
#endif
}

}  // namespace tc::test
