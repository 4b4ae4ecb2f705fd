#include "core/env.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace tc::env {

std::optional<std::string> get(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

static std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool flag(const char* name) {
  auto v = get(name);
  if (!v) return false;
  std::string s = lower(*v);
  return s == "1" || s == "on" || s == "true" || s == "yes";
}

std::optional<std::string> backend() {
  auto v = get("TC_BACKEND");
  if (!v) return std::nullopt;
  return lower(*v);
}

bool log_debug() {
  auto v = get("TC_LOG");
  return v && lower(*v) == "debug";
}

}  // namespace tc::env

namespace tc {
void log_debug(const std::string& line) {
  if (!env::log_debug()) return;
  static std::mutex mu;
  std::lock_guard lock(mu);
  std::fprintf(stderr, "[tc] %s\n", line.c_str());
}
}  // namespace tc
