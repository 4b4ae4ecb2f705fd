// Shared helpers for the Phobos tests.
#pragma once

#include <string>
#include <vector>

namespace phobos_test {

std::string read_file(const std::string& path);
std::string example(const std::string& name);  // text of phobos/examples/<name>
// Compares `actual` with the golden file line by line (first difference in the message);
// with PHOBOS_UPDATE_GOLDEN=1 rewrites the file instead.
std::string check_golden(const std::string& name, const std::string& actual);
// ||y - ref|| / (||ref|| + eps)
double rms_scaled(const std::vector<double>& y, const std::vector<double>& ref);

}  // namespace phobos_test
