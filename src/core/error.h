// Status plus a thread-local one-sentence message: every public entry point reports through
// these so that tc_last_error_message() always describes the last failure on this thread.
#pragma once

#include <fmt/format.h>
#include <tc/tc.h>

#include <string>

namespace tc {

void set_error_message(std::string message);
void clear_error();

// Records `message` for tc_last_error_message() and returns `status`.
template <typename... Args>
tc_status_t fail(tc_status_t status, fmt::format_string<Args...> format, Args&&... args) {
  set_error_message(fmt::format(format, std::forward<Args>(args)...));
  return status;
}

}  // namespace tc

// Returns from the calling function when `expr` yields a status other than TC_SUCCESS.
#define TC_TRY(expr)                                         \
  do {                                                       \
    tc_status_t tc_try_status_ = (expr);                     \
    if (tc_try_status_ != TC_SUCCESS) return tc_try_status_; \
  } while (0)
