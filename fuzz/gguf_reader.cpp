// libFuzzer target: the GGUF parser on arbitrary bytes. Any input must either parse or fail
// with TC_ERROR_INVALID_FORMAT and a located message; ASan/UBSan catch out-of-bounds reads.
// The buffer is copied to an exact-size allocation so reads past the end are detected.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "gguf/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size ? size : 1]);
  if (size) std::memcpy(copy.get(), data, size);
  tc::gguf::Parsed parsed;
  const tc_status_t st = tc::gguf::parse(copy.get(), size, "fuzz", &parsed);
  if (st != TC_SUCCESS && st != TC_ERROR_INVALID_FORMAT) std::abort();
  if (st == TC_SUCCESS) {
    // Touch every tensor's extent: it must lie inside the input.
    for (const auto& t : parsed.tensors) {
      if (parsed.data_offset + t.offset + t.nbytes > size) std::abort();
      if (t.nbytes > 0) {
        volatile uint8_t last = copy[parsed.data_offset + t.offset + t.nbytes - 1];
        (void)last;
      }
    }
  }
  return 0;
}
