// Environment knobs, read once per process (docs/api.md lists them).
#pragma once

#include <optional>
#include <string>

namespace tc::env {

// TC_BACKEND=cpu|cuda: forces the device of TC_DEVICE_AUTO contexts and the dispatch rows.
std::optional<std::string> backend();
bool log_debug();             // TC_LOG=debug
bool flag(const char* name);  // "1", "on", "true", "yes" (any case)
std::optional<std::string> get(const char* name);

}  // namespace tc::env

namespace tc {
// Prints one line to stderr when TC_LOG=debug.
void log_debug(const std::string& line);
}  // namespace tc
