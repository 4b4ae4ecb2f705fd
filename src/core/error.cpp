#include "core/error.h"

namespace tc {
namespace {
thread_local std::string t_message;
}

void set_error_message(std::string message) {
  t_message = std::move(message);
}
void clear_error() {
  t_message.clear();
}

}  // namespace tc

extern "C" {

const char* tc_last_error_message(void) {
  return tc::t_message.c_str();
}

const char* tc_status_string(tc_status_t status) {
  switch (status) {
    case TC_SUCCESS:
      return "success";
    case TC_ERROR_NULL_POINTER:
      return "null pointer";
    case TC_ERROR_INVALID_VALUE:
      return "invalid value";
    case TC_ERROR_INVALID_SHAPE:
      return "invalid shape";
    case TC_ERROR_INVALID_LD:
      return "invalid leading dimension";
    case TC_ERROR_BUFFER_TOO_SMALL:
      return "buffer too small";
    case TC_ERROR_UNSUPPORTED_DTYPE:
      return "unsupported dtype combination";
    case TC_ERROR_CONTEXT_MISMATCH:
      return "object of another context";
    case TC_ERROR_OVERLAP:
      return "overlapping outputs";
    case TC_ERROR_OUT_OF_RANGE:
      return "out of range";
    case TC_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case TC_ERROR_NO_DEVICE:
      return "no such device";
    case TC_ERROR_NOT_SUPPORTED:
      return "not supported";
    case TC_ERROR_BACKEND_FAILURE:
      return "backend failure";
    case TC_ERROR_IO:
      return "I/O error";
    case TC_ERROR_INVALID_FORMAT:
      return "invalid format";
    case TC_ERROR_INTERNAL:
      return "internal error";
    default:
      break;
  }
  return "unknown status";
}

}  // extern "C"
