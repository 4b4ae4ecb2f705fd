// Suites are parameterized over every device kind; a test on a device that is absent (CUDA in
// CI) skips with the reason, so a new backend joins the suites without new test code.
#pragma once

#include <gtest/gtest.h>
#include <tc/tc.h>

#include <string>
#include <vector>

namespace tc::test {

std::vector<tc_device_t> all_devices();  // CPU, CUDA
std::string device_name(tc_device_t d);
// "" when usable, else why not ("this build has no CUDA backend", "no CUDA device").
std::string device_unavailable_reason(tc_device_t d);

// A context for `d` that the test owns; skips the test when the device is absent.
struct ContextGuard {
  tc_context_t* ctx = nullptr;
  ~ContextGuard() {
    if (ctx) tc_context_destroy(ctx);
  }
};

}  // namespace tc::test

#define TC_CONTEXT_OR_SKIP(guard, device)                                                      \
  do {                                                                                         \
    std::string why_ = ::tc::test::device_unavailable_reason(device);                          \
    if (!why_.empty()) GTEST_SKIP() << why_;                                                   \
    ASSERT_EQ(tc_context_create(&(guard).ctx, device), TC_SUCCESS) << tc_last_error_message(); \
  } while (0)

#define TC_ASSERT_OK(expr)                                                       \
  do {                                                                           \
    tc_status_t st_ = (expr);                                                    \
    ASSERT_EQ(st_, TC_SUCCESS) << #expr << ": " << tc_status_string(st_) << ": " \
                               << tc_last_error_message();                       \
  } while (0)
