#include "core/dtype.h"

#include <tc/tc.h>

extern "C" {

const char* tc_dtype_name(tc_dtype_t dtype) {
  switch (dtype) {
    case TC_DTYPE_F32:
      return "f32";
    case TC_DTYPE_F16:
      return "f16";
    case TC_DTYPE_BF16:
      return "bf16";
    case TC_DTYPE_I8:
      return "i8";
    case TC_DTYPE_I32:
      return "i32";
    case TC_DTYPE_TF32:
      return "tf32";
    case TC_DTYPE_Q4_0:
      return "q4_0";
    case TC_DTYPE_Q8_0:
      return "q8_0";
    case TC_DTYPE_Q4_K:
      return "q4_k";
    case TC_DTYPE_Q6_K:
      return "q6_k";
    default:
      break;
  }
  return "invalid";
}

size_t tc_dtype_size(tc_dtype_t dtype) {
  switch (dtype) {
    case TC_DTYPE_F32:
    case TC_DTYPE_I32:
    case TC_DTYPE_TF32:
      return 4;
    case TC_DTYPE_F16:
    case TC_DTYPE_BF16:
      return 2;
    case TC_DTYPE_I8:
      return 1;
    default:
      return 0;
  }
}

const char* tc_version_string(void) {
  return TC_VERSION_STRING;
}

}  // extern "C"
