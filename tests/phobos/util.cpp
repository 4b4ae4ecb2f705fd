#include "util.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace phobos_test {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string example(const std::string& name) {
  return read_file(std::string(PHOBOS_EXAMPLES_DIR) + "/" + name);
}

std::string check_golden(const std::string& name, const std::string& actual) {
  std::string path = std::string(PHOBOS_TEST_DIR) + "/golden/" + name;
  const char* upd = std::getenv("PHOBOS_UPDATE_GOLDEN");
  if (upd && std::string(upd) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return {};
  }
  std::ifstream in(path);
  if (!in) return "missing golden file " + path + " (run with PHOBOS_UPDATE_GOLDEN=1 to create it)";
  std::stringstream want(read_file(path)), got(actual);
  std::string w, g;
  for (int line = 1;; ++line) {
    bool hw = static_cast<bool>(std::getline(want, w));
    bool hg = static_cast<bool>(std::getline(got, g));
    if (!hw && !hg) return {};
    if (!hw || !hg || w != g)
      return name + ":" + std::to_string(line) + ": expected\n  " + (hw ? w : "<end of file>") +
             "\ngot\n  " + (hg ? g : "<end of output>");
  }
}

double rms_scaled(const std::vector<double>& y, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    num += (y[i] - ref[i]) * (y[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num) / (std::sqrt(den) + 1e-30);
}

}  // namespace phobos_test
